import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { applyAny, applyIfChanged } from "../../src/runtime/apply.js";
import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import { restClientRequests } from "../../src/runtime/metrics.js";
import { setControllerReference } from "../../src/runtime/ownership.js";
import { DiscoveryFailedError, NoKindMatchError } from "../../src/runtime/restmapper.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";
import { installWidgetCrd, WIDGET } from "../support/widgets.js";

const SECRET: ResourceType = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};
const CLUSTER_ROLE: ResourceType = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "ClusterRole",
  plural: "clusterroles",
  namespaced: false,
};
const APISERVICE: ResourceType = {
  group: "apiregistration.k8s.io",
  version: "v1",
  kind: "APIService",
  plural: "apiservices",
  namespaced: false,
};

/** Requests this process sent with `method` so far (all codes). */
async function sent(method: string): Promise<number> {
  const m = await restClientRequests.get();
  return m.values.filter((v) => v.labels["method"] === method).reduce((a, v) => a + v.value, 0);
}

const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

function crd(group: string, kind: string, plural: string): KubeObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

describe("apply any kind through discovery", () => {
  let client: KubeClient;
  let ns: string;
  const suffix = randomBytes(3).toString("hex");
  const cleanups: (() => Promise<unknown>)[] = [];

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-apply");
  });
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    client.close();
  });

  it("applies core, grouped and cluster-scoped kinds by apiVersion and kind", async () => {
    const cm = await applyAny(
      client,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "any", namespace: ns }, data: { a: "1" } },
      { fieldManager: "t-any" },
    );
    assert.equal(cm.metadata.namespace, ns);
    const name = `rt-apply-${suffix}`;
    cleanups.push(() => client.delete(CLUSTER_ROLE, name));
    // A namespace on a cluster-scoped kind cannot mean anything: it is dropped, as kubectl does.
    const role = await applyAny(
      client,
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name, namespace: ns },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
      },
      { fieldManager: "t-any" },
    );
    assert.equal(role.metadata.namespace, undefined);
    assert.equal((await client.get(CLUSTER_ROLE, name)).metadata.uid, role.metadata.uid);
  });

  it("says which field is missing, and which kind is not served", async () => {
    const noNs = await rejection(
      applyAny(
        client,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } },
        { fieldManager: "t" },
      ),
    );
    assert.match(String(noNs), /ConfigMap x: metadata\.namespace is required/);
    const unknown = await rejection(
      applyAny(
        client,
        { apiVersion: "nope.test.dev/v1", kind: "Nothing", metadata: { name: "x", namespace: ns } },
        { fieldManager: "t" },
      ),
    );
    assert.ok(unknown instanceof NoKindMatchError, String(unknown));
    assert.match((unknown as Error).message, /kind Nothing is not served in nope\.test\.dev\/v1/);
    const noKind = await rejection(
      applyAny(client, { apiVersion: "v1", metadata: { name: "x", namespace: ns } }, { fieldManager: "t" }),
    );
    assert.match(String(noKind), /kind is required/);
  });

  it("dryRun=All answers the result and stores nothing", async () => {
    const dry = await applyAny(
      client,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "dry", namespace: ns }, data: { k: "v" } },
      { fieldManager: "t-any", dryRun: true },
    );
    assert.deepEqual((dry as KubeObject & { data: unknown }).data, { k: "v" });
    assert.ok(isNotFound(await rejection(client.get(CONFIGMAP, "dry", ns))), "nothing was stored");
  });

  it("finds a kind installed after the first lookup (a miss asks discovery again)", async () => {
    const group = `late-${suffix}.test.dev`;
    assert.equal(await client.resources.find(`${group}/v1`, "Gadget"), undefined);
    cleanups.push(() => client.delete(CUSTOM_RESOURCE_DEFINITION, `gadgets.${group}`));
    await client.apply(CUSTOM_RESOURCE_DEFINITION, crd(group, "Gadget", "gadgets"), { fieldManager: "t" });
    const type = await eventually(
      () => client.resources.find(`${group}/v1`, "Gadget"),
      20_000,
      "Gadget served",
    );
    assert.equal(type.plural, "gadgets");
    const g = await applyAny(
      client,
      { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: "g", namespace: ns }, spec: { n: 1 } },
      { fieldManager: "t-any" },
    );
    assert.ok(g.metadata.uid);
  });

  it("a group-version whose discovery fails is an error now and asked again later, never cached as absent", async () => {
    const group = `broken-${suffix}.test.dev`;
    // An aggregated API whose backing Service does not exist: the API server answers 503 for it.
    cleanups.push(() => client.delete(APISERVICE, `v1.${group}`));
    await client.apply(
      APISERVICE,
      {
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: { name: `v1.${group}` },
        spec: {
          group,
          version: "v1",
          service: { namespace: ns, name: "nowhere", port: 443 },
          insecureSkipTLSVerify: true,
          groupPriorityMinimum: 1000,
          versionPriority: 15,
        },
      },
      { fieldManager: "t" },
    );
    const failed = await eventually(
      async () => {
        const e = await rejection(client.resources.mapping(`${group}/v1`, "Doohickey"));
        return e instanceof DiscoveryFailedError ? e : undefined;
      },
      20_000,
      "discovery of the broken group to fail",
    );
    assert.match(failed.message, new RegExp(`discovery of ${group}/v1 failed`));
    // Now the group is served for real: the same mapper must find it.
    await client.delete(APISERVICE, `v1.${group}`);
    cleanups.push(() => client.delete(CUSTOM_RESOURCE_DEFINITION, `doohickeys.${group}`));
    await client.apply(CUSTOM_RESOURCE_DEFINITION, crd(group, "Doohickey", "doohickeys"), {
      fieldManager: "t",
    });
    const type = await eventually(
      () => client.resources.mapping(`${group}/v1`, "Doohickey").catch(() => undefined),
      30_000,
      "the group to be served by the CRD",
    );
    assert.equal(type.plural, "doohickeys");
  });
});

describe("zero-write convergence", () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rt-converge");
  });
  after(() => client.close());

  const configMap = (data: Record<string, string>, labels: Record<string, string> = { app: "x" }) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "conv", namespace: ns, labels },
    data,
  });

  it("writes once, then knows from managedFields that the same intent changes nothing", async () => {
    const first = await applyIfChanged(client, configMap({ a: "1" }), { fieldManager: "conv" });
    assert.equal(first.action, "applied");
    const patches = await sent("PATCH");
    const second = await applyIfChanged(client, configMap({ a: "1" }), { fieldManager: "conv" });
    assert.equal(second.action, "unchanged");
    assert.equal(second.decidedBy, "managedFields");
    assert.equal(await sent("PATCH"), patches, "no PATCH at all, not even a dry run");
    assert.equal(second.object.metadata.resourceVersion, first.object.metadata.resourceVersion);
  });

  it("decides from an informer cache that keeps managedFields, with no request", async () => {
    const inf = new Informer(client, CONFIGMAP, {
      namespaces: [ns],
      keepManagedFields: true,
      log: silentLogger(),
    });
    inf.start();
    try {
      await inf.waitForSync();
      // PATCH only: the informer's own watch GET may be counted at any moment.
      const patches = await sent("PATCH");
      const r = await applyIfChanged(client, configMap({ a: "1" }), {
        fieldManager: "conv",
        live: inf.get(`${ns}/conv`) ?? null,
      });
      assert.equal(r.decidedBy, "managedFields");
      assert.equal(await sent("PATCH"), patches, "no apply, not even a dry run");
    } finally {
      await inf.stop();
    }
  });

  it("knows an unchanged custom resource and an owned child without a write", async () => {
    await installWidgetCrd(client);
    const widget = {
      apiVersion: `${WIDGET.group}/v1`,
      kind: "Widget",
      metadata: { name: "wc", namespace: ns },
    };
    const w = await applyIfChanged(
      client,
      { ...widget, spec: { size: 3, color: "teal" } },
      { fieldManager: "conv" },
    );
    assert.equal(w.action, "applied");
    const child = () =>
      setControllerReference(w.object, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "wc-child", namespace: ns, labels: { app: "wc" } },
        data: { size: "3" },
      });
    assert.equal((await applyIfChanged(client, child(), { fieldManager: "conv" })).action, "applied");
    const patches = await sent("PATCH");
    const again = await applyIfChanged(
      client,
      { ...widget, spec: { size: 3, color: "teal" } },
      { fieldManager: "conv" },
    );
    const childAgain = await applyIfChanged(client, child(), { fieldManager: "conv" });
    assert.equal(again.decidedBy, "managedFields");
    assert.equal(childAgain.decidedBy, "managedFields", "owner references are matched by their uid key");
    assert.equal(await sent("PATCH"), patches);
  });

  it("writes when a value changes, and when the intent drops a field it owned", async () => {
    const changed = await applyIfChanged(client, configMap({ a: "2" }), { fieldManager: "conv" });
    assert.equal(changed.action, "applied");
    assert.deepEqual((changed.object as KubeObject & { data: unknown }).data, { a: "2" });
    const dropped = await applyIfChanged(client, configMap({ a: "2" }, {}), { fieldManager: "conv" });
    assert.equal(dropped.action, "applied", "a label no longer wanted must be removed");
    const live = await client.get(CONFIGMAP, "conv", ns);
    assert.equal(live.metadata.labels?.["app"], undefined);
  });

  it("writes when another manager changed a field this one owns", async () => {
    await applyIfChanged(client, configMap({ a: "3" }), { fieldManager: "conv" });
    await client.mergePatch(CONFIGMAP, "conv", ns, { data: { a: "edited" } });
    const repaired = await applyIfChanged(client, configMap({ a: "3" }), {
      fieldManager: "conv",
      force: true,
    });
    assert.equal(repaired.action, "applied");
    assert.equal((repaired.object as KubeObject & { data: Record<string, string> }).data["a"], "3");
  });

  it("falls back to a dry run where the stored form differs from the intent (Secret stringData)", async () => {
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "conv-secret", namespace: ns },
      stringData: { password: "not-logged" },
    };
    assert.equal((await applyIfChanged(client, secret, { fieldManager: "conv" })).action, "applied");
    const before = await client.get(SECRET, "conv-secret", ns);
    const again = await applyIfChanged(client, secret, { fieldManager: "conv" });
    assert.equal(again.action, "unchanged");
    assert.equal(again.decidedBy, "dryRun");
    assert.equal(
      (await client.get(SECRET, "conv-secret", ns)).metadata.resourceVersion,
      before.metadata.resourceVersion,
    );
  });

  it("a dry run of a change reports it and stores nothing", async () => {
    const rv = (await client.get(CONFIGMAP, "conv", ns)).metadata.resourceVersion;
    const dry = await applyIfChanged(client, configMap({ a: "4" }), { fieldManager: "conv", dryRun: true });
    assert.equal(dry.action, "dry-run");
    assert.equal((dry.object as KubeObject & { data: Record<string, string> }).data["a"], "4");
    assert.equal((await client.get(CONFIGMAP, "conv", ns)).metadata.resourceVersion, rv);
  });
});
