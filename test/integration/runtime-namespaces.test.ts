import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { Informer, type WatchScope } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  clientWithToken,
  grantClusterWide,
  ROLE,
  ROLE_BINDING,
  serviceAccountToken,
} from "../support/rbac.js";

const configMap = (ns: string, name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns, labels: { "rt-ns-test": "yes" } },
});

/** What a cache holds, as sorted keys: equal caches give equal lists. */
const keys = (inf: Informer) =>
  inf
    .list()
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
    .sort();

/** An informer of the test's ConfigMaps in `namespaces`, watched the way `scope` says; events recorded. */
function informer(client: KubeClient, namespaces: string[], scope: WatchScope) {
  const events: string[] = [];
  const inf = new Informer(client, CONFIGMAP, {
    namespaces,
    labelSelector: "rt-ns-test=yes",
    chooseScope: async () => scope,
    log: silentLogger(),
  });
  inf.addHandler({
    add: (o) => events.push(`add ${o.metadata.namespace}/${o.metadata.name}`),
    delete: (o) => events.push(`delete ${o.metadata.namespace}/${o.metadata.name}`),
  });
  return { inf, events };
}

describe("namespaces: one watch per namespace or one cluster-wide, chosen at start and changed at run time", () => {
  let admin: KubeClient;
  const ns: string[] = [];

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    for (let i = 0; i < 4; i++) ns.push(await freshNamespace(admin, `rt-ns${i}`));
    for (const n of ns) await admin.create(CONFIGMAP, configMap(n, "first"));
  });
  after(() => admin.close());

  it("gives the same cache and the same events either way, before and after namespaces change", async () => {
    const per = informer(admin, [ns[0]!, ns[1]!], "namespaces");
    const all = informer(admin, [ns[0]!, ns[1]!], "cluster");
    try {
      for (const x of [per, all]) {
        x.inf.start();
        await x.inf.waitForSync();
      }
      assert.deepEqual(per.inf.scopes.sort(), [ns[0]!, ns[1]!].sort());
      assert.deepEqual(all.inf.scopes, ["*"]);
      const expected = [`${ns[0]}/first`, `${ns[1]}/first`].sort();
      assert.deepEqual(keys(per.inf), expected);
      assert.deepEqual(keys(all.inf), expected, "the cluster-wide watch drops other namespaces' objects");

      // A namespace added at run time is listed and watched; one removed leaves as deletions.
      for (const x of [per, all]) x.inf.setNamespaces([ns[1]!, ns[2]!]);
      const wanted = [`${ns[1]}/first`, `${ns[2]}/first`].sort();
      for (const x of [per, all])
        await eventually(
          () => (JSON.stringify(keys(x.inf)) === JSON.stringify(wanted) ? true : undefined),
          30_000,
          "the new namespace's objects",
        );
      await admin.create(CONFIGMAP, configMap(ns[2]!, "second"));
      await admin.create(CONFIGMAP, configMap(ns[0]!, "second"));
      await admin.create(CONFIGMAP, configMap(ns[3]!, "second"));
      const last = [...wanted, `${ns[2]}/second`].sort();
      for (const x of [per, all])
        await eventually(
          () => (JSON.stringify(keys(x.inf)) === JSON.stringify(last) ? true : undefined),
          30_000,
          "the watch of the added namespace",
        );
      assert.deepEqual(per.inf.scopes.sort(), [ns[1]!, ns[2]!].sort());
      assert.deepEqual([...per.events].sort(), [...all.events].sort(), "the same events in both modes");
      assert.ok(
        per.events.includes(`delete ${ns[0]}/first`),
        "the removed namespace's object left as a deletion",
      );
      assert.ok(!per.events.some((e) => e.includes(`${ns[3]}/`)), "nothing from a namespace never added");
    } finally {
      await per.inf.stop();
      await all.inf.stop();
    }
  });

  it("watches cluster-wide only when allowed to, and says so", async () => {
    const viewer = await serviceAccountToken(admin, ns[0]!, "ns-viewer");
    // Allowed in two namespaces only: "auto" must fall back to one watch per namespace.
    for (const n of [ns[0]!, ns[1]!]) {
      await admin.apply(
        ROLE,
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "cm-reader", namespace: n },
          rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }],
        },
        { fieldManager: "tests" },
      );
      await admin.apply(
        ROLE_BINDING,
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "cm-reader", namespace: n },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm-reader" },
          subjects: [{ kind: "ServiceAccount", name: "ns-viewer", namespace: ns[0]! }],
        },
        { fieldManager: "tests" },
      );
    }
    const lines: string[] = [];
    const log = pino(
      { level: "info" },
      new Writable({
        write(c, _e, cb) {
          lines.push(String(c));
          cb();
        },
      }),
    );
    const limited = clientWithToken(admin, viewer);
    const m = new Manager({
      target: "scope",
      client: limited,
      log,
      namespaces: [ns[0]!, ns[1]!],
      clusterWatchFrom: 2,
    });
    try {
      const inf = await m.syncedInformer(CONFIGMAP, { labelSelector: "rt-ns-test=yes" });
      assert.equal(inf.watchScope, "namespaces");
      assert.ok(
        lines.some((l) => l.includes('"one watch per namespace"') && l.includes("not allowed")),
        lines.join("\n"),
      );
      // Allowed everywhere: the same manager settings choose one cluster-wide watch.
      await grantClusterWide(admin, ns[0]!, "ns-viewer", `${ns[0]}-cm-everywhere`, [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch"] },
      ]);
      const m2 = new Manager({
        target: "scope2",
        client: limited,
        log,
        namespaces: [ns[0]!, ns[1]!],
        clusterWatchFrom: 2,
      });
      const inf2 = await m2.syncedInformer(CONFIGMAP, { labelSelector: "rt-ns-test=yes" });
      assert.equal(inf2.watchScope, "cluster");
      assert.ok(
        lines.some(
          (l) =>
            l.includes("one cluster-wide watch") && l.includes("allowed to list and watch every namespace"),
        ),
      );
      assert.deepEqual(keys(inf2), keys(inf));
      await m2.stop();
    } finally {
      await m.stop();
      limited.close();
    }
  });
});
