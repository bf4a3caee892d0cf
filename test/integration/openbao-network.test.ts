import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EVENTS_V1 } from "../../src/runtime/events.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { reconcileNetwork } from "../../src/targets/openbao/workload/network/reconcile.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import {
  createOpenBaoCluster,
  installOpenBaoClusterCrd,
  serviceContext,
} from "../support/openbao-cluster.js";

// The networking service against the real API server: every object is accepted by the server's own
// validation, carries the cluster as controller, a second pass writes nothing, an Ingress no longer
// asked for goes, and a Gateway route on a server without Gateway API says GatewayAPIMissing.

const t = (group: string, version: string, kind: string, plural: string): ResourceType => ({
  group,
  version,
  kind,
  plural,
  namespaced: true,
});
const SERVICE = t("", "v1", "Service", "services");
const INGRESS = t("networking.k8s.io", "v1", "Ingress", "ingresses");
const NETWORK_POLICY = t("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies");
const CONFIG_MAP = t("", "v1", "ConfigMap", "configmaps");
// biome-ignore lint/suspicious/noExplicitAny: tests read API objects by path
type Any = any;

describe("openbao networking service on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let cluster: OpenBaoCluster;
  const spec = {
    replicas: 3,
    readReplicas: { replicas: 1, service: { enabled: true } },
    service: { type: "ClusterIP", annotations: { "example.org/team": "secrets" } },
    ingress: { enabled: true, host: "bao.example.org", className: "nginx" },
    network: {
      ingressRules: [
        { from: [{ namespaceSelector: { matchLabels: { team: "monitoring" } } }], ports: [{ port: 8200 }] },
      ],
      egressRules: [{ to: [{ ipBlock: { cidr: "192.0.2.0/24" } }], ports: [{ port: 443, protocol: "TCP" }] }],
    },
  };

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "ot-network");
    cluster = await createOpenBaoCluster(client, ns, "bao", spec);
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
    client.close();
  });

  const snapshot = async () => {
    const out = new Map<string, string>();
    for (const type of [SERVICE, INGRESS, NETWORK_POLICY])
      for (const o of (await client.list(type, { namespace: ns })).items)
        out.set(`${type.kind}/${o.metadata.name}`, o.metadata.resourceVersion!);
    return out;
  };

  it("creates Services, Ingress and NetworkPolicy, owned by the cluster; a second pass writes nothing", async () => {
    const ctx = serviceContext(client, cluster, "openbao-network");
    const first = await reconcileNetwork(ctx, cluster, { operatorNamespace: "platform-operator-system" });
    assert.equal(first.ready, true, first.message);
    const objects = await snapshot();
    assert.deepEqual([...objects.keys()].sort(), [
      "Ingress/bao",
      "NetworkPolicy/bao-jobs-network-policy",
      "NetworkPolicy/bao-network-policy",
      "Service/bao",
      "Service/bao-active",
      "Service/bao-public",
      "Service/bao-read",
    ]);
    const headless: Any = await client.get(SERVICE, "bao", ns);
    assert.equal(headless.spec.clusterIP, "None");
    assert.equal(headless.spec.publishNotReadyAddresses, true);
    for (const [key] of objects) {
      const [kind, name] = key.split("/") as [string, string];
      const type = kind === "Service" ? SERVICE : kind === "Ingress" ? INGRESS : NETWORK_POLICY;
      const o: KubeObject = await client.get(type, name, ns);
      const ref = o.metadata.ownerReferences?.find((r) => r.controller);
      assert.equal(ref?.uid, cluster.metadata.uid, `${key} is controlled by the cluster`);
    }
    // The egress rule to the API server names the address the server itself advertises.
    const kubernetes: Any = await client.get(SERVICE, "kubernetes", "default");
    const policy: Any = await client.get(NETWORK_POLICY, "bao-network-policy", ns);
    const cidrs = policy.spec.egress.flatMap((r: Any) =>
      (r.to ?? []).map((p: Any) => p.ipBlock?.cidr).filter(Boolean),
    );
    assert.ok(cidrs.includes(`${kubernetes.spec.clusterIP}/32`), JSON.stringify(cidrs));
    assert.ok(cidrs.includes("192.0.2.0/24"), "the user's egress rule is kept");
    // The Jobs' policy, as the API server took it: the user's rule instead of 443 anywhere.
    const jobs: Any = await client.get(NETWORK_POLICY, "bao-jobs-network-policy", ns);
    assert.deepEqual(jobs.spec.podSelector.matchExpressions[0].values, [
      "backup",
      "restore",
      "upgrade-snapshot",
      "validation-hook",
      "upgrade",
    ]);
    const jobCidrs = jobs.spec.egress.flatMap((r: Any) =>
      (r.to ?? []).map((p: Any) => p.ipBlock?.cidr).filter(Boolean),
    );
    assert.ok(jobCidrs.includes("192.0.2.0/24") && !jobCidrs.includes("0.0.0.0/0"), JSON.stringify(jobCidrs));
    assert.equal(policy.spec.podSelector.matchExpressions[0].operator, "NotIn");

    const second = await reconcileNetwork(ctx, cluster, { operatorNamespace: "platform-operator-system" });
    assert.equal(second.ready, true);
    assert.deepEqual(second.changes, []);
    assert.deepEqual(await snapshot(), objects, "an unchanged cluster costs no write");
  });

  it("deletes the Ingress once it is no longer asked for, and leaves the rest alone", async () => {
    const ctx = serviceContext(client, cluster, "openbao-network");
    const before = await snapshot();
    const off = {
      ...cluster,
      spec: { ...cluster.spec, ingress: { ...spec.ingress, enabled: false } },
    } as OpenBaoCluster;
    const out = await reconcileNetwork(ctx, off, { operatorNamespace: "platform-operator-system" });
    assert.equal(out.ready, true, out.message);
    assert.deepEqual(out.changes, ["Ingress/bao deleted"]);
    const after = await snapshot();
    assert.equal(after.has("Ingress/bao"), false);
    before.delete("Ingress/bao");
    assert.deepEqual(after, before);
  });

  it("observe-only: says what it would write and delete, writes nothing", async () => {
    const ctx = { ...serviceContext(client, cluster, "openbao-network"), observeOnly: true };
    const before = await snapshot();
    const changed = {
      ...cluster,
      // As the test before left it (no Ingress), plus a new Service type and no read replicas.
      spec: {
        ...cluster.spec,
        ingress: { ...spec.ingress, enabled: false },
        service: { type: "NodePort" },
        readReplicas: { replicas: 0 },
      },
    } as OpenBaoCluster;
    const out = await reconcileNetwork(ctx, changed, { operatorNamespace: "platform-operator-system" });
    assert.deepEqual(out.changes, [
      "Service/bao-public would be updated",
      "Service/bao-read would be deleted",
    ]);
    assert.deepEqual(await snapshot(), before);
  });

  it("tls.mode ACME: upstream's <name>-acme Service, accepted by the server, deleted once ACME is left", async () => {
    const ctx = serviceContext(client, cluster, "openbao-network");
    // As the tests before left it (no Ingress), with ACME.
    const base = { ...cluster.spec, ingress: { ...spec.ingress, enabled: false } };
    const acme = {
      ...cluster,
      spec: {
        ...base,
        tls: {
          mode: "ACME",
          acme: { directoryURL: "https://acme.example.org/dir", domains: ["bao.example.org"] },
        },
      },
    } as OpenBaoCluster;
    const on = await reconcileNetwork(ctx, acme, { operatorNamespace: "platform-operator-system" });
    assert.equal(on.ready, true, on.message);
    const svc: Any = await client.get(SERVICE, "bao-acme", ns);
    assert.equal(svc.spec.publishNotReadyAddresses, true);
    assert.deepEqual(
      svc.spec.ports.map((p: Any) => [p.name, p.port, p.targetPort]),
      [
        ["http-80", 80, 8200],
        ["https-443", 443, 8200],
      ],
    );
    assert.equal(svc.metadata.ownerReferences?.find((r: Any) => r.controller)?.uid, cluster.metadata.uid);
    const off = await reconcileNetwork(ctx, { ...cluster, spec: base } as OpenBaoCluster, {
      operatorNamespace: "platform-operator-system",
    });
    assert.ok(off.changes?.includes("Service/bao-acme deleted"), off.changes?.join(", "));
    assert.equal(await client.getOrUndefined(SERVICE, "bao-acme", ns), undefined);
  });

  it("reports GatewayAPIMissing as the gateway's own concern, with a Warning event, when a route is asked for and the CRDs are absent", async (tc) => {
    if (await client.resources.find("gateway.networking.k8s.io/v1", "HTTPRoute"))
      return tc.skip("this API server serves Gateway API");
    const ctx = serviceContext(client, cluster, "openbao-network");
    const gw = {
      ...cluster,
      spec: {
        ...cluster.spec,
        gateway: { enabled: true, gatewayRef: { name: "gw" }, hostname: "bao.example.org" },
      },
    } as OpenBaoCluster;
    const out = await reconcileNetwork(ctx, gw, {});
    // The routes are a concern of their own: networking, and so the cluster, goes on without them.
    assert.equal(out.ready, true, out.message);
    assert.equal(out.gateway?.ready, false);
    assert.equal(out.gateway?.reason, "GatewayAPIMissing");
    assert.match(out.gateway!.message, /HTTPRoute, BackendTLSPolicy/);
    await ctx.recorder.flush();
    const events = (await client.list(EVENTS_V1, { namespace: ns })).items as Any[];
    assert.ok(
      events.some((e) => e.reason === "GatewayAPIMissing" && e.regarding.uid === cluster.metadata.uid),
      "a GatewayAPIMissing event about the cluster",
    );
    // Services and the NetworkPolicy are still in place: the rest of networking went on.
    assert.ok((await snapshot()).has("NetworkPolicy/bao-network-policy"));
  });

  it("gatewayAPI: false (the chart's gatewayAPI.enabled) asks the API server nothing about the Gateway API, and says why a route is missing", async () => {
    // Every call naming the Gateway API's group, through the client and its discovery.
    const asked: string[] = [];
    const note = (args: unknown[]) => {
      const text = JSON.stringify(args);
      if (text.includes("gateway.networking.k8s.io")) asked.push(text);
    };
    const spy = <T extends object>(target: T, inner: (p: string | symbol) => object | undefined): T =>
      new Proxy(target, {
        get(t, p) {
          const nested = inner(p);
          if (nested) return nested;
          const v = Reflect.get(t, p);
          if (typeof v !== "function") return v;
          return (...args: unknown[]) => {
            note(args);
            return v.apply(t, args);
          };
        },
      });
    const watched = spy(client, (p) =>
      p === "resources" ? spy(client.resources, () => undefined) : undefined,
    );
    const ctx = serviceContext(watched, cluster, "openbao-network");
    const gw = {
      ...cluster,
      spec: {
        ...cluster.spec,
        gateway: { enabled: true, gatewayRef: { name: "gw" }, hostname: "bao.example.org" },
      },
    } as OpenBaoCluster;
    const out = await reconcileNetwork(ctx, gw, { gatewayAPI: false });
    assert.equal(out.ready, true, out.message);
    assert.equal(out.gateway?.ready, false);
    assert.match(out.gateway!.message, /runs without the Gateway API/);
    // A pass without spec.gateway looks for routes it no longer wants, unless the API is off.
    await reconcileNetwork(ctx, cluster, { gatewayAPI: false });
    assert.deepEqual(asked, []);
    await reconcileNetwork(ctx, cluster, {});
    assert.ok(asked.length > 0, "with the Gateway API on, the same pass asks (the spy sees it)");
  });
});

// A cluster made before the names followed upstream has a ClusterIP Service `<name>`, a headless
// `<name>-internal` and a NetworkPolicy `<name>`, all controlled by it. A pass moves every one to
// upstream's name; only the peer Service its pods live under stays, and only when the cluster says
// it keeps it (openbao.org/peer-service, which the reconciler writes from the voters' serviceName).
describe("openbao networking of a cluster from before upstream's names", () => {
  let client: KubeClient;
  let ns: string;
  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "ot-network-legacy");
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
    client.close();
  });

  const legacyObjects = async (c: OpenBaoCluster) => {
    const owner = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      name: c.metadata.name!,
      uid: c.metadata.uid!,
      controller: true,
    };
    const name = c.metadata.name!;
    const meta = (n: string) => ({
      name: n,
      namespace: ns,
      labels: { "openbao.org/cluster": name, "app.kubernetes.io/managed-by": "platform-operator" },
      ownerReferences: [owner],
    });
    const selector = { "openbao.org/cluster": name };
    const ports = [{ name: "https", port: 8200 }];
    const made = {
      client: await client.create(SERVICE, {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta(name),
        spec: { type: "ClusterIP", selector, ports },
      }),
      headless: await client.create(SERVICE, {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta(`${name}-internal`),
        spec: { clusterIP: "None", publishNotReadyAddresses: true, selector, ports },
      }),
      policy: await client.create(NETWORK_POLICY, {
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: meta(name),
        spec: { podSelector: { matchLabels: selector }, policyTypes: ["Ingress"] },
      }),
    };
    return made;
  };
  const uidOf = async (type: ResourceType, name: string) =>
    (await client.getOrUndefined(type, name, ns))?.metadata.uid;

  it("moves the client Service, the headless Service and the NetworkPolicy to upstream's names", async () => {
    const c = await createOpenBaoCluster(client, ns, "old", { replicas: 1 });
    const before = await legacyObjects(c);
    const ctx = serviceContext(client, c, "openbao-network");
    const out = await reconcileNetwork(ctx, c, { operatorNamespace: "platform-operator-system" });
    assert.equal(out.ready, true, out.message);
    const headless: Any = await client.get(SERVICE, "old", ns);
    assert.equal(headless.spec.clusterIP, "None", "Service old is now upstream's headless Service");
    assert.notEqual(headless.metadata.uid, before.client.metadata.uid);
    assert.equal(((await client.get(SERVICE, "old-public", ns)) as Any).spec.type, "ClusterIP");
    assert.equal(await uidOf(SERVICE, "old-internal"), undefined, "the old headless Service is gone");
    assert.equal(await uidOf(NETWORK_POLICY, "old"), undefined, "the old NetworkPolicy is gone");
    assert.notEqual(await uidOf(NETWORK_POLICY, "old-network-policy"), undefined);
    for (const line of ["Service/old deleted", "Service/old-internal deleted", "NetworkPolicy/old deleted"])
      assert.ok(out.changes?.includes(line), `${line} in ${out.changes?.join(", ")}`);
  });

  it("keeps the peer Service the cluster says its pods live under, and leaves what it does not control", async () => {
    const c = await createOpenBaoCluster(client, ns, "kept", { replicas: 1 });
    const before = await legacyObjects(c);
    const marked = await client.mergePatch<OpenBaoCluster>(OPENBAOCLUSTER, "kept", ns, {
      metadata: { annotations: { "openbao.org/peer-service": "kept-internal" } },
    });
    // Someone else's NetworkPolicy under a name the cluster's old one had in another cluster's scheme.
    await client.create(NETWORK_POLICY, {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "kept-network-policy-neighbour", namespace: ns },
      spec: { podSelector: {}, policyTypes: ["Ingress"] },
    });
    const ctx = serviceContext(client, marked, "openbao-network");
    const out = await reconcileNetwork(ctx, marked, { operatorNamespace: "platform-operator-system" });
    assert.equal(out.ready, true, out.message);
    assert.equal(
      await uidOf(SERVICE, "kept-internal"),
      before.headless.metadata.uid,
      "the pods' Service stays",
    );
    assert.equal(((await client.get(SERVICE, "kept", ns)) as Any).spec.clusterIP, "None");
    assert.equal(await uidOf(NETWORK_POLICY, "kept"), undefined);
    assert.notEqual(await uidOf(NETWORK_POLICY, "kept-network-policy-neighbour"), undefined);
    const again = await reconcileNetwork(ctx, marked, { operatorNamespace: "platform-operator-system" });
    assert.deepEqual(again.changes, [], "a second pass writes nothing");
  });
  it("retires upstream's stale per-colour client Services and the Gateway CA ConfigMap's old name", async () => {
    const c = await createOpenBaoCluster(client, ns, "colours", { replicas: 1 });
    const owner = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      name: "colours",
      uid: c.metadata.uid!,
      controller: true,
    };
    const meta = (n: string) => ({
      name: n,
      namespace: ns,
      labels: { "openbao.org/cluster": "colours" },
      ownerReferences: [owner],
    });
    const ports = [{ name: "api", port: 8200 }];
    for (const colour of ["blue", "green"])
      await client.create(SERVICE, {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta(`colours-public-${colour}`),
        spec: { selector: { "openbao.org/cluster": "colours" }, ports },
      });
    await client.create(CONFIG_MAP, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: meta("colours-backend-ca"),
      data: { "ca.crt": "old" },
    });
    const out = await reconcileNetwork(serviceContext(client, c, "openbao-network"), c, {
      operatorNamespace: "platform-operator-system",
    });
    assert.equal(out.ready, true, out.message);
    for (const [type, name] of [
      [SERVICE, "colours-public-blue"],
      [SERVICE, "colours-public-green"],
      [CONFIG_MAP, "colours-backend-ca"],
    ] as const) {
      assert.equal(await uidOf(type, name), undefined, `${name} is gone`);
      assert.ok(out.changes?.includes(`${type.kind}/${name} deleted`), out.changes?.join(", "));
    }
  });
});
