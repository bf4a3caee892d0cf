import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OpenBaoApiVersion, OpenBaoClusterKind, OpenBaoRestoreKind } from "../../src/apis/index.js";
import { applyAny } from "../../src/runtime/apply.js";
import {
  CONFIGMAP,
  POD,
  SECRET,
  STATEFULSET,
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
} from "../../src/runtime/builtin-types.js";
import { KubeClient } from "../../src/runtime/client.js";
import type { Credentials } from "../../src/runtime/credentials/types.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { LABEL_MANAGED_BY, LEGACY_MANAGED_BY, MANAGED_BY } from "../../src/targets/openbao/identity.js";
import { checkAdmissionDependencies } from "../../src/targets/openbao/policies/dependencies.js";
import { TENANT_POLICY } from "../../src/targets/openbao/policies/rules.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { OPENBAOTENANT } from "../../src/targets/openbao/tenant/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { POLICY_KINDS, renderOpenBaoChart } from "../support/openbao-chart.js";
import { installOpenBaoClusterCrd, installOpenBaoTenantCrd } from "../support/openbao-cluster.js";
import { metricSum, startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";
import {
  ALL_CASES,
  CLUSTER_BASE,
  caseMessage,
  type PolicyCase,
  REFUSED_WRITER_SECRET,
  RESTORE_BASE,
} from "../support/openbao-policy-cases.js";

// The chart's ValidatingAdmissionPolicies (admissionPolicies.enabled), rendered by the real helm
// and evaluated by the real kube-apiserver: every rule refuses its case with the message the rule
// table (and so `validate`) has, and admits the fixed twin; the locks refuse a user, and admit the
// operator's ServiceAccount and the identities Kubernetes' own controllers and OpenBao's service
// registration write as. Bound to this file's namespaces only (the target's namespaces: its own and
// the release's), so other suites on the shared API server are untouched. Other identities are impersonated by the admin.

const SERVICE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
};
const LOCK = "this object belongs to an OpenBaoCluster and only the operator changes it";

/** The admin's credentials, acting as `user` (and `group`, when given). */
function impersonating(base: Credentials, user: string, group?: string): KubeClient {
  const creds: Credentials = {
    server: base.server,
    source: `${base.source} as ${user}`,
    async requestAuth() {
      const auth = await base.requestAuth();
      return {
        ...auth,
        headers: {
          ...(auth.headers as Record<string, string>),
          "Impersonate-User": user,
          ...(group ? { "Impersonate-Group": group } : {}),
        },
      };
    },
  };
  return new KubeClient(creds, "platform-operator-tests");
}

async function refusal(write: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await write();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

describe("the chart's admission policies on the real API server", () => {
  let admin: KubeClient;
  let ns: string;
  /** The release's (the operator's) namespace: a target namespace too, so the tenant binding covers it. */
  let opNs: string;
  let release: string;
  let operatorUser: string;
  let policyObjects: KubeObject[] = [];
  const as: Record<string, KubeClient> = {};

  before(async () => {
    const env = sharedEnv();
    admin = clientFor(env.kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    await installOpenBaoTenantCrd(admin);
    ns = await freshNamespace(admin, "vap");
    opNs = await freshNamespace(admin, "vap-op");
    release = `vap-${ns.slice(-6)}`;
    operatorUser = `system:serviceaccount:${opNs}:${release}-openbao`;
    policyObjects = (await renderOpenBaoChart(release, opNs, [ns, opNs])).filter((o) =>
      POLICY_KINDS.includes(o.kind),
    );
    assert.equal(policyObjects.length, 10, "five policies and their five bindings");
    for (const o of policyObjects) await applyAny(admin, o, { fieldManager: "test-setup", force: true });
    // Every identity this file writes as may write these kinds in the namespace (RBAC runs before
    // admission): what is refused below is refused by the policies.
    const users = [
      operatorUser,
      "alice",
      // Holds every verb ("*" covers upstream's custom ones) and may get every Secret.
      "carol",
      "system:kube-controller-manager",
      "system:serviceaccount:kube-system:generic-garbage-collector",
      "system:serviceaccount:kube-system:namespace-controller",
      `system:serviceaccount:${ns}:c`,
    ];
    await admin.create(
      { group: "rbac.authorization.k8s.io", version: "v1", kind: "Role", plural: "roles", namespaced: true },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "writers", namespace: ns },
        rules: [
          {
            apiGroups: ["", "apps", "openbao.org"],
            resources: [
              "configmaps",
              "secrets",
              "services",
              "pods",
              "statefulsets",
              "openbaoclusters",
              "openbaorestores",
            ],
            verbs: ["*"],
          },
        ],
      },
    );
    await admin.create(
      {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "RoleBinding",
        plural: "rolebindings",
        namespaced: true,
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "writers", namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "writers" },
        subjects: users.map((name) => ({ kind: "User", apiGroup: "rbac.authorization.k8s.io", name })),
      },
    );
    // Editors without upstream's extra verbs: bob may edit the kinds and get the one Secret the
    // cases lend everywhere; dave may also restore.
    await grantEditor(admin, ns, "bob", []);
    await grantEditor(admin, ns, "dave", ["restore"]);
    for (const u of [...users, "bob", "dave"]) as[u] = impersonating(admin.credentials, u);
    // A binding takes effect a moment after it is created: wait for the first refusal.
    let probe = 0;
    await eventually(
      async () =>
        (await refusal(() => admin.create(CONFIGMAP, managedConfigMap(`probe-${probe++}`))))?.includes(LOCK),
      30_000,
      "the lock policy to be in force",
    );
  });

  after(async () => {
    for (const o of policyObjects) {
      const type =
        o.kind === "ValidatingAdmissionPolicy"
          ? VALIDATING_ADMISSION_POLICY
          : VALIDATING_ADMISSION_POLICY_BINDING;
      await admin.delete(type, o.metadata.name!).catch(() => undefined);
    }
  });

  const managedConfigMap = (name: string, annotations: Record<string, string> = {}): KubeObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: ns, labels: { [LABEL_MANAGED_BY]: MANAGED_BY }, annotations },
    data: { a: "1" },
  });

  async function writeCase(client: KubeClient, c: PolicyCase, spec: Record<string, unknown>, name: string) {
    const restore = c.table.resource === "openbaorestores";
    const type: ResourceType = restore ? OPENBAORESTORE : OPENBAOCLUSTER;
    const base = restore ? RESTORE_BASE : CLUSTER_BASE;
    return applyAny(
      client,
      {
        apiVersion: OpenBaoApiVersion,
        kind: restore ? OpenBaoRestoreKind : OpenBaoClusterKind,
        metadata: { name, namespace: ns },
        spec: { ...base, ...spec },
      } as KubeObject,
      { fieldManager: "test-user", force: true },
    ).then(() => type);
  }

  for (const c of ALL_CASES.filter((c) => !c.crdRefuses)) {
    it(`${c.table.name} ${c.rule}: refused with the table's message, its fixed twin admitted`, async () => {
      const name = c.rule.slice(0, 40);
      // A rule that asks the authorizer: the same object, refused for an editor without the verb
      // (or the Secret), admitted for one who holds everything.
      const refused = c.authz ? as[c.authz.holds.includes("restore") ? "dave" : "bob"]! : admin;
      const admitted = c.authz ? as["carol"]! : admin;
      if (c.before) await writeCase(admin, c, c.before, name);
      const message = await refusal(() => writeCase(refused, c, c.bad, name));
      assert.ok(message?.includes(caseMessage(c)), `refused with the rule's message: ${message}`);
      assert.ok(message?.includes(`${release}-${c.table.name}`), `names the policy: ${message}`);
      // Each case breaks its one rule: the message is the only one.
      const others = c.table.rules.filter((r) => r.id !== c.rule && message?.includes(r.message));
      assert.deepEqual(
        others.map((r) => r.id),
        [],
      );
      if (c.authz) {
        const rule = c.table.rules.find((r) => r.id === c.rule)!;
        assert.ok(
          message?.includes(rule.field!) && message.includes(rule.needs!.replace(" on the Secret", "")),
        );
      }
      await writeCase(admitted, c, c.good, name);
    });
  }

  it("who may set what: an editor without the verb changes the rest of a cluster an admin gave a custom image, not the image", async () => {
    const spec = {
      ...CLUSTER_BASE,
      backup: {
        schedule: "0 3 * * *",
        jwtAuthRole: "backup",
        image: "registry.example.com/executor:1",
        target: {
          bucket: "b",
          endpoint: "https://s3.example.com",
          credentialsSecretRef: { name: REFUSED_WRITER_SECRET },
        },
      },
    };
    const obj = (s: Record<string, unknown>) =>
      ({
        apiVersion: OpenBaoApiVersion,
        kind: OpenBaoClusterKind,
        metadata: { name: "delegated", namespace: ns },
        spec: s,
      }) as KubeObject;
    const bob = as["bob"]!;
    const first = await refusal(() => bob.create(OPENBAOCLUSTER, obj(spec)));
    assert.match(first ?? "", /spec\.backup\.image: .*usecustomexecutables or usehelperimages/);
    await as["carol"]!.create(OPENBAOCLUSTER, obj(spec));
    await bob.mergePatch(OPENBAOCLUSTER, "delegated", ns, { spec: { replicas: 5 } });
    const changed = await refusal(() =>
      bob.mergePatch(OPENBAOCLUSTER, "delegated", ns, {
        spec: { backup: { image: "registry.example.com/other:2" } },
      }),
    );
    assert.match(changed ?? "", /spec\.backup\.image: /);
    await admin.delete(OPENBAOCLUSTER, "delegated", ns);
  });

  it("lock-managed-resource-mutations: break glass for a holder of the maintenance verb on the owning cluster, not for an editor", async () => {
    const op = as[operatorUser]!;
    const owned = (name: string): KubeObject => ({
      ...managedConfigMap(name, { "openbao.org/maintenance": "true" }),
      metadata: {
        name,
        namespace: ns,
        labels: { [LABEL_MANAGED_BY]: MANAGED_BY, "openbao.org/cluster": "c" },
        annotations: { "openbao.org/maintenance": "true" },
      },
    });
    await op.create(CONFIGMAP, owned("maint-verb"));
    // bob may write ConfigMaps (RBAC) but holds no maintenance verb: the lock stands.
    assert.ok(
      (
        await refusal(() => as["bob"]!.mergePatch(CONFIGMAP, "maint-verb", ns, { data: { a: "2" } }))
      )?.includes(LOCK),
    );
    await grantMaintenance(admin, ns, "erin");
    const erin = impersonating(admin.credentials, "erin");
    // A new RoleBinding reaches the authorizer a moment after it is created.
    await eventually(
      async () =>
        (await refusal(() => erin.mergePatch(CONFIGMAP, "maint-verb", ns, { data: { a: "3" } }))) ===
        undefined,
      30_000,
      "erin's maintenance verb to be in force",
    );
    await erin.delete(CONFIGMAP, "maint-verb", ns);
  });

  it("validate-openbaotenant: a tenant outside the operator's namespace may onboard only its own", async () => {
    const message = TENANT_POLICY.rules[0]!.message;
    const tenant = (namespace: string, name: string, targetNamespace: string): KubeObject => ({
      apiVersion: OpenBaoApiVersion,
      kind: "OpenBaoTenant",
      metadata: { name, namespace },
      spec: { targetNamespace },
    });
    // Refused: a tenant in the test's namespace onboarding a third one (the binding takes a moment).
    const elsewhere = await eventually(
      async () => refusal(() => admin.create(OPENBAOTENANT, tenant(ns, "elsewhere", `${ns}-other`))),
      30_000,
      "the tenant policy to be in force",
    );
    assert.ok(elsewhere.includes(message), `refused with the table's message: ${elsewhere}`);
    assert.ok(elsewhere.includes(`${release}-validate-openbaotenant`), `names the policy: ${elsewhere}`);
    // Also the operator's own namespace, from outside it.
    assert.ok(
      (await refusal(() => admin.create(OPENBAOTENANT, tenant(ns, "to-op", opNs))))?.includes(message),
    );
    // Admitted: its own namespace; and from the operator's namespace, any other one.
    await admin.create(OPENBAOTENANT, tenant(ns, "own", ns));
    await admin.create(OPENBAOTENANT, tenant(opNs, "any", `${ns}-other`));
    // An update that turns an admitted tenant elsewhere is refused as well.
    assert.ok(
      (
        await refusal(() => admin.mergePatch(OPENBAOTENANT, "own", ns, { spec: { targetNamespace: opNs } }))
      )?.includes(message),
    );
    // An empty spec.targetNamespace (which the rule would admit) never reaches it: the CRD refuses it.
    const empty = await refusal(() => admin.create(OPENBAOTENANT, tenant(ns, "empty", "")));
    assert.ok(empty !== undefined && !empty.includes(message), `the schema refuses it: ${empty}`);
    for (const [namespace, name] of [
      [ns, "own"],
      [opNs, "any"],
    ] as const)
      await admin.delete(OPENBAOTENANT, name, namespace);
  });

  it("lock-managed-resource-mutations: a user is refused create, update and delete; the operator is not", async () => {
    const alice = as["alice"]!;
    const op = as[operatorUser]!;
    assert.match(
      (await refusal(() => alice.create(CONFIGMAP, managedConfigMap("by-alice")))) ?? "",
      /only the operator changes it/,
    );
    await op.create(CONFIGMAP, managedConfigMap("owned"));
    const update = (c: KubeClient) => c.mergePatch(CONFIGMAP, "owned", ns, { data: { a: "2" } });
    assert.ok((await refusal(() => update(alice)))?.includes(LOCK));
    assert.ok(
      (await refusal(() => update(admin)))?.includes(LOCK),
      "cluster admins too, without maintenance",
    );
    await update(op);
    assert.ok((await refusal(() => alice.delete(CONFIGMAP, "owned", ns)))?.includes(LOCK));
    // An object the target does not own is nobody's business here.
    await alice.create(CONFIGMAP, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "mine", namespace: ns },
    });
    await op.delete(CONFIGMAP, "owned", ns);
  });

  it("lock-managed-resource-mutations: the garbage collector, kube-controller-manager and break glass are exempt; the namespace controller only in a namespace being deleted", async () => {
    const op = as[operatorUser]!;
    await op.create(CONFIGMAP, managedConfigMap("gc"));
    await as["system:serviceaccount:kube-system:generic-garbage-collector"]!.delete(CONFIGMAP, "gc", ns);
    await op.create(CONFIGMAP, managedConfigMap("kcm"));
    await as["system:kube-controller-manager"]!.mergePatch(CONFIGMAP, "kcm", ns, {
      metadata: { annotations: { "kcm.example/touched": "yes" } },
    });
    await as["system:kube-controller-manager"]!.delete(CONFIGMAP, "kcm", ns);
    // The namespace controller deletes only while the namespace is being deleted (proven on the
    // node, openbao-profiles-node.test.ts): in a live namespace it is refused like anyone.
    await op.create(CONFIGMAP, managedConfigMap("nsc"));
    assert.ok(
      (
        await refusal(() =>
          as["system:serviceaccount:kube-system:namespace-controller"]!.delete(CONFIGMAP, "nsc", ns),
        )
      )?.includes(LOCK),
    );
    await op.delete(CONFIGMAP, "nsc", ns);
    // system:masters on an object marked for maintenance.
    await op.create(CONFIGMAP, managedConfigMap("maint"));
    await admin.mergePatch(CONFIGMAP, "maint", ns, {
      metadata: { annotations: { "openbao.org/maintenance": "true" } },
    });
    await admin.mergePatch(CONFIGMAP, "maint", ns, { data: { a: "3" } });
    await admin.delete(CONFIGMAP, "maint", ns);
  });

  it("lock-managed-resource-mutations: a pod may change its own openbao-* labels, nothing else", async () => {
    await admin.create(
      { group: "", version: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true },
      {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "c", namespace: ns },
      },
    );
    const op = as[operatorUser]!;
    await op.create(POD, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "c-0",
        namespace: ns,
        labels: { [LABEL_MANAGED_BY]: MANAGED_BY, "openbao.org/cluster": "c" },
      },
      spec: { serviceAccountName: "c", containers: [{ name: "openbao", image: "openbao/openbao:2.7.2" }] },
    });
    const self = as[`system:serviceaccount:${ns}:c`]!;
    await self.mergePatch(POD, "c-0", ns, {
      metadata: { labels: { "openbao-active": "true", "openbao-sealed": "false" } },
    });
    assert.ok(
      (
        await refusal(() =>
          self.mergePatch(POD, "c-0", ns, { metadata: { labels: { "openbao.org/cluster": "d" } } }),
        )
      )?.includes(LOCK),
    );
    assert.ok(
      (
        await refusal(() =>
          as["alice"]!.mergePatch(POD, "c-0", ns, { metadata: { labels: { "openbao-active": "false" } } }),
        )
      )?.includes(LOCK),
      "another identity may not set them",
    );
    await op.delete(POD, "c-0", ns);
  });

  it("lock-controller-statefulset-mutations: the operator may scale a StatefulSet, not change what its pods run", async () => {
    const op = as[operatorUser]!;
    const sts = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "c", namespace: ns, labels: { [LABEL_MANAGED_BY]: MANAGED_BY } },
      spec: {
        replicas: 0,
        serviceName: "c-internal",
        selector: { matchLabels: { app: "c" } },
        template: {
          metadata: { labels: { app: "c" } },
          spec: { containers: [{ name: "openbao", image: "openbao/openbao:2.7.2", args: ["server"] }] },
        },
      },
    };
    await op.create(STATEFULSET, sts as KubeObject);
    await op.mergePatch(STATEFULSET, "c", ns, { spec: { replicas: 1 } });
    const reshape = {
      spec: {
        template: {
          spec: {
            containers: [{ name: "openbao", image: "openbao/openbao:2.7.2", args: ["server", "-dev"] }],
          },
        },
      },
    };
    const message = await refusal(() => op.mergePatch(STATEFULSET, "c", ns, reshape));
    assert.ok(
      message?.includes(
        "the operator may not change a container's command or args in a StatefulSet it runs.",
      ),
      message,
    );
    // A user is stopped by the other lock, before this one is asked.
    assert.ok(
      (
        await refusal(() => as["alice"]!.mergePatch(STATEFULSET, "c", ns, { spec: { replicas: 2 } }))
      )?.includes(LOCK),
    );
    await op.delete(STATEFULSET, "c", ns);
  });

  it("lock-managed-resource-mutations covers Secrets and Services as it does ConfigMaps", async () => {
    const op = as[operatorUser]!;
    const alice = as["alice"]!;
    const meta = (name: string, managedBy: string = MANAGED_BY) => ({
      name,
      namespace: ns,
      labels: { [LABEL_MANAGED_BY]: managedBy },
    });
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: meta("c-root-token"),
      stringData: { token: "x" },
    };
    const service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta("c"),
      spec: { clusterIP: "None", selector: { app: "c" }, ports: [{ name: "api", port: 8200 }] },
    };
    // An object made before the names followed upstream carries the old managed-by value: still locked.
    const legacy = { ...service, metadata: meta("c-internal", LEGACY_MANAGED_BY) };
    for (const [type, obj] of [
      [SECRET, secret],
      [SERVICE, service],
      [SERVICE, legacy],
    ] as const) {
      assert.ok((await refusal(() => alice.create(type, obj as KubeObject)))?.includes(LOCK), type.kind);
      await op.create(type, obj as KubeObject);
      assert.ok((await refusal(() => alice.delete(type, obj.metadata.name, ns)))?.includes(LOCK), type.kind);
      await op.delete(type, obj.metadata.name, ns);
    }
  });

  it("ProductionReady: True for a Hardened cluster once the policies are in place, AdmissionPoliciesNotReady without", {
    timeout: 180_000,
  }, async () => {
    // In a namespace the bindings do not cover: the operator runs as the admin here, not as the
    // ServiceAccount the locks exempt; the start-up check looks only at the policies themselves.
    const ns2 = await freshNamespace(admin, "vap-ready");
    const spec = {
      version: "2.7.2",
      storage: { size: "1Gi" },
      profile: "Hardened",
      replicas: 3,
      tls: { mode: "External" },
      unseal: {
        type: "transit",
        transit: { address: "https://transit.example.org:8200", mountPath: "transit", keyName: "bao" },
        credentialsSecretRef: { name: "transit-token" },
      },
      selfInit: {
        enabled: true,
        requests: [{ name: "audit", operation: "update", path: "sys/audit/stdout", data: { type: "file" } }],
      },
    };
    const readiness = async (name: string) =>
      eventually(
        async () => {
          const c = (await admin.get(OPENBAOCLUSTER, name, ns2)) as {
            status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
          };
          return c.status?.conditions?.find((x) => x.type === "ProductionReady");
        },
        90_000,
        `ProductionReady on ${name}`,
      );
    const run = async (prefix: string, name: string) => {
      const op = await startOpenBaoOperatorOnApi(
        sharedEnv().kubeconfigPath,
        ns2,
        `    admissionPolicies: { prefix: ${prefix} }\n`,
      );
      try {
        await applyAny(
          admin,
          {
            apiVersion: OpenBaoApiVersion,
            kind: OpenBaoClusterKind,
            metadata: { name, namespace: ns2 },
            spec,
          },
          { fieldManager: "test-user", force: true },
        );
        const c = await readiness(name);
        return {
          condition: c,
          gauge: metricSum(await op.metrics(), "openbao_admission_dependencies_ready", {}),
        };
      } finally {
        await op.stop();
      }
    };
    const ok = await run(`${release}-`, "prod");
    assert.deepEqual(
      [ok.condition.status, ok.condition.reason],
      ["True", "ProductionReady"],
      ok.condition.message,
    );
    assert.equal(ok.gauge, 1);
    const none = await run("absent-", "notyet");
    assert.deepEqual([none.condition.status, none.condition.reason], ["False", "AdmissionPoliciesNotReady"]);
    assert.match(
      none.condition.message,
      /^Admission policies are not ready: absent-validate-openbaocluster: /,
    );
    assert.equal(none.gauge, 0);
  });

  it("the start-up check: ready with every binding in place; one missing is named in the summary", async () => {
    const ready = await checkAdmissionDependencies(admin, `${release}-`);
    assert.deepEqual(ready, { ready: true, issues: [], summary: "" });
    const off = await checkAdmissionDependencies(admin, undefined);
    assert.equal(off.ready, false);
    await admin.delete(VALIDATING_ADMISSION_POLICY_BINDING, `${release}-lock-managed-resource-mutations`);
    const missing = await checkAdmissionDependencies(admin, `${release}-`);
    assert.equal(
      missing.summary,
      `Admission policies are not ready: ${release}-lock-managed-resource-mutations: binding not found`,
    );
    // A binding that only warns, a policy that fails open: each named with what is wrong.
    await admin.mergePatch(
      VALIDATING_ADMISSION_POLICY_BINDING,
      `${release}-validate-openbaorestore`,
      undefined,
      {
        spec: { validationActions: ["Warn"] },
      },
    );
    await admin.mergePatch(VALIDATING_ADMISSION_POLICY, `${release}-validate-openbaocluster`, undefined, {
      spec: { failurePolicy: "Ignore" },
    });
    const weak = await checkAdmissionDependencies(admin, `${release}-`);
    assert.deepEqual(weak.issues, [
      { dependency: `${release}-validate-openbaocluster`, issue: "policy failurePolicy is Ignore, not Fail" },
      {
        dependency: `${release}-validate-openbaorestore`,
        issue: "binding does not deny (validationActions without Deny)",
      },
      { dependency: `${release}-lock-managed-resource-mutations`, issue: "binding not found" },
    ]);
    const { registry } = await import("../../src/runtime/metrics.js");
    assert.match(await registry.metrics(), /^openbao_admission_dependencies_ready 0$/m);
  });
});

const ROLE: ResourceType = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "Role",
  plural: "roles",
  namespaced: true,
};
const ROLE_BINDING: ResourceType = { ...ROLE, kind: "RoleBinding", plural: "rolebindings" };
const EDIT = ["get", "list", "watch", "create", "update", "patch", "delete"];

async function bindRole(admin: KubeClient, ns: string, user: string, rules: unknown[]): Promise<void> {
  await admin.create(ROLE, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: user, namespace: ns },
    rules,
  });
  await admin.create(ROLE_BINDING, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: user, namespace: ns },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: user },
    subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: user }],
  });
}

/** An editor of the openbao kinds and ConfigMaps, with only `extra` of upstream's verbs, and get on one Secret. */
async function grantEditor(admin: KubeClient, ns: string, user: string, extra: string[]): Promise<void> {
  await bindRole(admin, ns, user, [
    {
      apiGroups: ["openbao.org"],
      resources: ["openbaoclusters", "openbaorestores"],
      verbs: [...EDIT, ...extra],
    },
    { apiGroups: [""], resources: ["configmaps"], verbs: EDIT },
    { apiGroups: [""], resources: ["secrets"], resourceNames: [REFUSED_WRITER_SECRET], verbs: ["get"] },
  ]);
}

/** Maintenance on the cluster "c" only, and the right (RBAC) to write ConfigMaps. */
async function grantMaintenance(admin: KubeClient, ns: string, user: string): Promise<void> {
  await bindRole(admin, ns, user, [
    {
      apiGroups: ["openbao.org"],
      resources: ["openbaoclusters"],
      resourceNames: ["c"],
      verbs: ["maintenance"],
    },
    { apiGroups: [""], resources: ["configmaps"], verbs: EDIT },
  ]);
}
