import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { buildExecutorJob } from "../../src/targets/openbao/adminops/jobs/build.js";
import { postureOf, productionReadiness } from "../../src/targets/openbao/profile/posture.js";
import { dueWarnings, WARNING_EVERY_MS } from "../../src/targets/openbao/profile/warnings.js";
import { nextStatus, type PassResult, transitions } from "../../src/targets/openbao/status.js";
import { jobsNetworkPolicy, networkPolicy } from "../../src/targets/openbao/workload/network/policies.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";

type Spec = OpenBaoCluster["spec"];
const ready = { ready: true, summary: "" };
const production: Partial<Spec> = {
  profile: "Hardened",
  tls: { mode: "External" },
  unseal: { type: "transit", transit: { address: "https://t:8200", mountPath: "transit", keyName: "k" } },
  selfInit: { enabled: true, requests: [] },
} as Partial<Spec>;
const spec = (s: Partial<Spec>): Spec => ({ version: "2.7.2", storage: { size: "1Gi" }, ...s }) as Spec;

describe("openbao profile: ProductionReady", () => {
  it("is True only for Hardened with admission ready, External or ACME TLS, an external seal and self-init", () => {
    const c = productionReadiness(postureOf(spec(production)), ready);
    assert.equal(c.status, "True");
    assert.equal(c.reason, "ProductionReady");
    assert.equal(
      productionReadiness(postureOf(spec({ ...production, tls: { mode: "ACME" } } as Partial<Spec>)), ready)
        .status,
      "True",
    );
  });

  it("names the first thing missing, in upstream's order", () => {
    const reason = (s: Partial<Spec>, admission = ready) =>
      productionReadiness(postureOf(spec(s)), admission).reason;
    // Each step fixes the reason named before and reveals the next one.
    assert.equal(reason({}), "ProfileNotSet");
    assert.equal(reason({ ...production, profile: "Development" }), "DevelopmentProfile");
    assert.equal(
      reason(production, { ready: false, summary: "Admission policies are not ready: x: missing" }),
      "AdmissionPoliciesNotReady",
    );
    assert.equal(
      reason({ ...production, tls: { mode: "OperatorManaged" } } as Partial<Spec>),
      "OperatorManagedTLS",
    );
    assert.equal(reason({ ...production, tls: undefined }), "OperatorManagedTLS");
    assert.equal(reason({ ...production, unseal: undefined }), "StaticUnsealInUse");
    assert.equal(reason({ ...production, unseal: { type: "static" } } as Partial<Spec>), "StaticUnsealInUse");
    assert.equal(reason({ ...production, selfInit: undefined }), "RootTokenStored");
    // Not known yet counts as not ready, with a message that says so.
    const unknown = productionReadiness(postureOf(spec(production)), undefined);
    assert.equal(unknown.reason, "AdmissionPoliciesNotReady");
    assert.match(unknown.message, /admission policies/);
    assert.equal(
      productionReadiness(postureOf(spec(production)), {
        ready: false,
        summary: "Admission policies are not ready: b: gone",
      }).message,
      "Admission policies are not ready: b: gone",
    );
  });
});

describe("openbao profile: hourly warnings", () => {
  const now = new Date("2026-12-03T12:00:00Z");
  it("each applies by the posture, and is due again an hour after its stamp", () => {
    assert.deepEqual(
      dueWarnings(postureOf(spec({})), undefined, now).map((w) => w.reason),
      ["ProfileNotSet", "StaticUnsealInUse", "RootTokenStored"],
    );
    assert.deepEqual(
      dueWarnings(postureOf(spec({ profile: "Development" })), {}, now).map((w) => w.reason),
      ["DevelopmentProfile", "StaticUnsealInUse", "RootTokenStored"],
    );
    assert.deepEqual(dueWarnings(postureOf(spec(production)), {}, now), []);
    const justNow = new Date(now.getTime() - WARNING_EVERY_MS + 1000).toISOString();
    const anHourAgo = new Date(now.getTime() - WARNING_EVERY_MS).toISOString();
    assert.deepEqual(
      dueWarnings(
        postureOf(spec({ profile: "Development" })),
        {
          "openbao.org/last-development-warning": justNow,
          "openbao.org/last-static-unseal-warning": anHourAgo,
          // Unreadable: said again rather than never.
          "openbao.org/last-root-token-warning": "yesterday",
        },
        now,
      ).map((w) => w.annotation),
      ["openbao.org/last-static-unseal-warning", "openbao.org/last-root-token-warning"],
    );
    // Upstream's RFC 3339 with nanoseconds is read too.
    assert.deepEqual(
      dueWarnings(
        postureOf(spec({ profile: "Hardened", selfInit: { enabled: true, requests: [] } } as Partial<Spec>)),
        {
          "openbao.org/last-static-unseal-warning": "2026-12-03T11:30:00.123456789Z",
        },
        now,
      ),
      [],
    );
  });
});

describe("openbao profile: status and networking", () => {
  const cluster = (s: Partial<Spec>): OpenBaoCluster =>
    ({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "demo", namespace: "ns", uid: "u", generation: 2 },
      spec: spec(s),
    }) as OpenBaoCluster;
  const pass: PassResult = {
    initialized: true,
    desiredReplicas: 3,
    readyReplicas: 3,
    activeLeader: "demo-0",
  };
  const now = new Date("2026-12-03T12:00:00Z");
  const cond = (c: OpenBaoCluster, r: PassResult, type: string) =>
    nextStatus(c, r, now).conditions?.find((x) => x.type === type);

  it("Development is a SecurityRisk; inline credentials are named with it, and without it on their own", () => {
    const dev = cond(cluster({ profile: "Development" }), pass, "SecurityRisk");
    assert.equal(dev?.status, "True");
    assert.equal(dev?.reason, "DevelopmentProfile");
    const both = cond(
      cluster({ profile: "Development" }),
      { ...pass, inlineCredentials: ["spec.unseal.transit.token"] },
      "SecurityRisk",
    );
    assert.equal(both?.reason, "DevelopmentProfile");
    assert.match(both!.message, /spec\.unseal\.transit\.token/);
    assert.equal(
      cond(cluster({}), { ...pass, inlineCredentials: ["spec.unseal.transit.token"] }, "SecurityRisk")
        ?.reason,
      "InlineCredentials",
    );
    assert.equal(cond(cluster({ profile: "Hardened" }), pass, "SecurityRisk"), undefined);
  });

  it("EtcdEncryptionWarning is always True, ProductionReady always present; both say so by event once", () => {
    const s = nextStatus(cluster({}), pass, now);
    const etcd = s.conditions?.find((x) => x.type === "EtcdEncryptionWarning");
    assert.equal(etcd?.status, "True");
    assert.equal(etcd?.reason, "EtcdEncryptionUnknown");
    assert.equal(s.conditions?.find((x) => x.type === "ProductionReady")?.reason, "ProfileNotSet");
    const said = transitions(undefined, s.conditions ?? []).map((c) => c.type);
    assert.ok(said.includes("EtcdEncryptionWarning") && said.includes("ProductionReady"));
    // The next pass, unchanged, says neither again.
    const again = nextStatus({ ...cluster({}), status: s }, pass, now);
    assert.deepEqual(
      transitions(s.conditions, again.conditions ?? []).map((c) => c.type),
      [],
    );
    const ok = nextStatus(cluster(production), { ...pass, admission: ready }, now);
    assert.equal(ok.conditions?.find((x) => x.type === "ProductionReady")?.status, "True");
  });

  it("the Jobs' policy: Development (or unset) without egress rules may reach any address on 443; with rules, or Hardened, not", () => {
    const inputs = { apiServer: { cidrs: ["10.96.0.1/32"], ports: [443] } };
    const egress = (p: ReturnType<typeof networkPolicy>) =>
      (p["spec"] as { egress: { to: { ipBlock?: { cidr: string } }[] }[] }).egress;
    const anywhere = (p: ReturnType<typeof networkPolicy>) =>
      egress(p).filter((r) => r.to.some((t) => t.ipBlock?.cidr === "0.0.0.0/0"));
    const dev = jobsNetworkPolicy(cluster({ profile: "Development" }), inputs as never);
    assert.equal(dev.metadata.name, "demo-jobs-network-policy");
    assert.deepEqual(anywhere(dev), [
      {
        to: [{ ipBlock: { cidr: "0.0.0.0/0" } }, { ipBlock: { cidr: "::/0" } }],
        ports: [{ protocol: "TCP", port: 443 }],
      },
    ]);
    assert.equal(anywhere(jobsNetworkPolicy(cluster({}), inputs as never)).length, 1);
    assert.equal(anywhere(jobsNetworkPolicy(cluster({ profile: "Hardened" }), inputs as never)).length, 0);
    const rule = { to: [{ ipBlock: { cidr: "192.0.2.0/24" } }], ports: [{ port: 9000 }] };
    const withRules = jobsNetworkPolicy(
      cluster({ profile: "Development", network: { egressRules: [rule] } } as Partial<Spec>),
      inputs as never,
    );
    assert.equal(anywhere(withRules).length, 0);
    assert.deepEqual(egress(withRules).at(-1), rule);
    // Nothing comes in; only the Jobs' components are selected, and the OpenBao pods' own policy
    // leaves them out (it would otherwise keep them from the object store).
    const spec = dev["spec"] as {
      ingress?: unknown[];
      policyTypes: string[];
      podSelector: { matchExpressions: unknown[] };
    };
    assert.equal(spec.ingress, undefined);
    assert.deepEqual(spec.policyTypes, ["Ingress", "Egress"]);
    assert.deepEqual(spec.podSelector.matchExpressions, [
      {
        key: "openbao.org/component",
        operator: "In",
        values: ["backup", "restore", "upgrade-snapshot", "validation-hook", "upgrade"],
      },
    ]);
    const main = networkPolicy(cluster({ profile: "Development" }), inputs as never)["spec"] as {
      podSelector: { matchExpressions: unknown[] };
    };
    assert.deepEqual(main.podSelector.matchExpressions, [
      {
        key: "openbao.org/component",
        operator: "NotIn",
        values: ["backup", "restore", "upgrade-snapshot", "validation-hook", "upgrade"],
      },
    ]);
    assert.equal(anywhere(networkPolicy(cluster({ profile: "Development" }), inputs as never)).length, 0);
  });
});

describe("openbao profile: AppArmor", () => {
  it("NodeSecurityCapabilityMismatch only with appArmorEnabled; True when pods are refused for AppArmor", () => {
    const c = (appArmorEnabled?: boolean): OpenBaoCluster =>
      ({
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: "demo", namespace: "ns", generation: 1 },
        spec: spec(
          appArmorEnabled === undefined ? {} : ({ workloadHardening: { appArmorEnabled } } as Partial<Spec>),
        ),
      }) as OpenBaoCluster;
    const pass: PassResult = { initialized: false, desiredReplicas: 1, readyReplicas: 0 };
    const now = new Date();
    const of = (x: OpenBaoCluster, r: PassResult) =>
      nextStatus(x, r, now).conditions?.find((k) => k.type === "NodeSecurityCapabilityMismatch");
    assert.equal(of(c(), pass), undefined);
    assert.equal(of(c(false), pass), undefined);
    assert.deepEqual([of(c(true), pass)?.status, of(c(true), pass)?.reason], ["False", "Ready"]);
    const refused = of(c(true), {
      ...pass,
      replicaFailure: 'pods "demo-0" is forbidden: AppArmor is not supported',
    });
    assert.deepEqual([refused?.status, refused?.reason], ["True", "AppArmorUnsupported"]);
    assert.equal(of(c(true), { ...pass, replicaFailure: "exceeded quota" })?.status, "False");
  });
});

describe("openbao profile: appArmorEnabled on every pod the operator makes", () => {
  const c = (appArmorEnabled: boolean): OpenBaoCluster =>
    ({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
      spec: spec({ workloadHardening: { appArmorEnabled } } as Partial<Spec>),
    }) as OpenBaoCluster;
  // biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
  const podOf = (o: any) => o.spec.template.spec;
  it("sets the runtime's default AppArmor profile on the voters and the Jobs only when asked", () => {
    for (const on of [true, false]) {
      const sts = buildStatefulSet(c(on), {
        component: "server",
        replicas: 1,
        configHash: "h",
        clusterDomain: "cluster.local",
        runtime: { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] },
      });
      const job = buildExecutorJob({
        cluster: c(on),
        name: "demo-backup-x",
        component: "backup",
        image: "op:dev",
        contract: {
          operation: "backup",
          openbao: { address: "https://demo-active.ns.svc:8200" },
          auth: { method: "jwt", role: "backup", audience: "openbao-internal" },
          store: { provider: "s3", bucket: "b", key: "k.snap" },
        } as never,
        serviceAccountName: "demo-backup",
      });
      for (const pod of [podOf(sts), podOf(job)])
        assert.deepEqual(pod.securityContext.appArmorProfile, on ? { type: "RuntimeDefault" } : undefined);
    }
  });
});
