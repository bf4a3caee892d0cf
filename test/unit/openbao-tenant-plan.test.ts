import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { parse } from "yaml";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../src/apis/openbaorestore.js";
import { type OpenBaoTenant, OpenBaoTenantReason } from "../../src/apis/openbaotenant.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { refuseTarget } from "../../src/targets/openbao/tenant/guard.js";
import {
  DEFAULT_LIMIT_RANGE,
  DEFAULT_QUOTA,
  planOffboarding,
  planTenant,
  TENANT_ANNOTATION,
  TenantObjectNames,
} from "../../src/targets/openbao/tenant/plan.js";
import {
  TARGET_RULES_WITHOUT_SECRETS,
  TENANT_KIND_RULES,
  TENANT_ROLE_RULES,
} from "../../src/targets/openbao/tenant/rules.js";
import { secretAllowLists } from "../../src/targets/openbao/tenant/secrets.js";

const OPERATOR = { namespace: "platform-operator", serviceAccount: "platform-operator-openbao" };

const tenant = (namespace: string, targetNamespace: string, spec: object = {}): OpenBaoTenant => ({
  apiVersion: "openbao.org/v1alpha1",
  kind: "OpenBaoTenant",
  metadata: { name: "t", namespace },
  spec: { targetNamespace, ...spec },
});

const cluster = (name: string, spec: object = {}): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name, namespace: "team-a" },
    spec: { version: "2.4.1", replicas: 3, ...spec },
  }) as unknown as OpenBaoCluster;

const find = (objects: KubeObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

describe("openbao tenant: the guard", () => {
  it("lets a tenant in the operator's namespace onboard another namespace", () => {
    assert.equal(refuseTarget(OPERATOR.namespace, "team-a", OPERATOR.namespace), undefined);
  });

  it("lets a tenant elsewhere onboard its own namespace only (SecurityViolation otherwise)", () => {
    assert.equal(refuseTarget("team-a", "team-a", OPERATOR.namespace), undefined);
    const refused = refuseTarget("team-a", "team-b", OPERATOR.namespace);
    assert.equal(refused?.reason, OpenBaoTenantReason.SecurityViolation);
    assert.match(refused!.message, /"team-a" may onboard only "team-a", not "team-b"/);
  });

  it("never onboards upstream's default denied namespaces or the operator's own, whoever asks", () => {
    for (const ns of ["kube-system", "kube-public", "kube-node-lease", "kube-anything", "openshift"]) {
      const refused = refuseTarget(OPERATOR.namespace, ns, OPERATOR.namespace);
      assert.equal(refused?.reason, OpenBaoTenantReason.NamespaceNotAllowed, ns);
      assert.match(refused!.message, /may not manage tenant RBAC in system namespaces/);
    }
    for (const [ns, prefix] of [
      ["openshift-monitoring", "openshift-"],
      ["gke-system", "gke-"],
      ["eks-addons", "eks-"],
      ["aws-observability", "aws-"],
      ["aks-command", "aks-"],
      ["azure-arc", "azure-"],
    ])
      assert.match(
        refuseTarget(OPERATOR.namespace, ns, OPERATOR.namespace)?.message ?? "",
        new RegExp(`"${ns}" is a system namespace \\(denied prefix "${prefix}"\\)`),
      );
    assert.match(
      refuseTarget(OPERATOR.namespace, "openshift", OPERATOR.namespace)?.message ?? "",
      /\(denied namespace "openshift"\)/,
    );
    assert.equal(
      refuseTarget("kube-system", "kube-system", OPERATOR.namespace)?.reason,
      "NamespaceNotAllowed",
    );
    const own = refuseTarget(OPERATOR.namespace, OPERATOR.namespace, OPERATOR.namespace);
    assert.equal(own?.reason, OpenBaoTenantReason.NamespaceNotAllowed);
    assert.match(own!.message, /operator's own/);
    // Upstream's lists do not name "default" nor a namespace that merely contains a prefix.
    for (const ns of ["default", "team-kube-a", "openshiftish"])
      assert.equal(refuseTarget(OPERATOR.namespace, ns, OPERATOR.namespace), undefined, ns);
  });

  it("takes the configured lists in place of upstream's, Kubernetes' own namespaces staying refused", () => {
    const denied = { names: ["platform"], prefixes: ["corp-"] };
    assert.match(
      refuseTarget(OPERATOR.namespace, "platform", OPERATOR.namespace, denied)?.message ?? "",
      /\(denied namespace "platform"\)/,
    );
    assert.match(
      refuseTarget(OPERATOR.namespace, "corp-billing", OPERATOR.namespace, denied)?.message ?? "",
      /\(denied prefix "corp-"\)/,
    );
    assert.equal(refuseTarget(OPERATOR.namespace, "openshift", OPERATOR.namespace, denied), undefined);
    assert.equal(refuseTarget(OPERATOR.namespace, "gke-a", OPERATOR.namespace, denied), undefined);
    const none = { names: [], prefixes: [] };
    assert.equal(
      refuseTarget(OPERATOR.namespace, "kube-system", OPERATOR.namespace, none)?.reason,
      "NamespaceNotAllowed",
    );
    assert.equal(
      refuseTarget(OPERATOR.namespace, OPERATOR.namespace, OPERATOR.namespace, none)?.reason,
      "NamespaceNotAllowed",
    );
    // A self-service tenant in a denied namespace is refused there too.
    assert.equal(refuseTarget("corp-x", "corp-x", OPERATOR.namespace, denied)?.reason, "NamespaceNotAllowed");
    const plan = planTenant({
      tenant: tenant(OPERATOR.namespace, "corp-x"),
      clusters: [],
      operator: OPERATOR,
      denied,
    });
    assert.equal(plan.refused?.reason, "NamespaceNotAllowed");
  });

  it("plans nothing for a refused tenant", () => {
    const plan = planTenant({ tenant: tenant("team-a", "team-b"), clusters: [], operator: OPERATOR });
    assert.equal(plan.refused?.reason, "SecurityViolation");
    assert.ok(!("apply" in plan));
  });
});

describe("openbao tenant: the objects in the target namespace", () => {
  it("grants the openbao process's ServiceAccount the target's Role, under upstream's names", () => {
    const plan = planTenant({
      tenant: tenant(OPERATOR.namespace, "team-a"),
      clusters: [],
      operator: OPERATOR,
    });
    assert.ok(!plan.refused);
    assert.equal(plan.namespace, "team-a");
    const role = find(plan.apply, "Role", "openbao-operator-tenant-role");
    assert.deepEqual(role?.["rules"], TENANT_ROLE_RULES);
    const rb = find(plan.apply, "RoleBinding", "openbao-operator-tenant-rolebinding");
    assert.deepEqual(rb?.["roleRef"], {
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: "openbao-operator-tenant-role",
    });
    assert.deepEqual(rb?.["subjects"], [
      { kind: "ServiceAccount", name: OPERATOR.serviceAccount, namespace: OPERATOR.namespace },
    ]);
    for (const o of plan.apply) {
      assert.equal(o.metadata.namespace, "team-a");
      assert.equal(o.metadata.annotations?.[TENANT_ANNOTATION], `${OPERATOR.namespace}/t`);
    }
  });

  it("labels the namespace for Pod Security restricted", () => {
    const plan = planTenant({ tenant: tenant("team-a", "team-a"), clusters: [], operator: OPERATOR });
    assert.ok(!plan.refused);
    assert.deepEqual(plan.namespaceLabels, {
      "pod-security.kubernetes.io/enforce": "restricted",
      "pod-security.kubernetes.io/audit": "restricted",
      "pod-security.kubernetes.io/warn": "restricted",
    });
  });

  it("leaves the namespace's labels alone when a platform layer owns them (external)", () => {
    const plan = planTenant({
      tenant: tenant("team-a", "team-a"),
      clusters: [],
      operator: OPERATOR,
      podSecurityLabels: "external",
    });
    assert.ok(!plan.refused);
    assert.equal(plan.namespaceLabels, undefined);
    // Everything else is onboarded as in enforce mode.
    const enforce = planTenant({ tenant: tenant("team-a", "team-a"), clusters: [], operator: OPERATOR });
    assert.ok(!enforce.refused);
    assert.deepEqual(plan.apply, enforce.apply);
    assert.deepEqual(plan.remove, enforce.remove);
  });

  it("uses upstream's quota and limit defaults, or the tenant's own specs", () => {
    const plain = planTenant({ tenant: tenant("team-a", "team-a"), clusters: [], operator: OPERATOR });
    assert.ok(!plain.refused);
    assert.deepEqual(
      find(plain.apply, "ResourceQuota", "openbao-operator-tenant-quota")?.["spec"],
      DEFAULT_QUOTA,
    );
    assert.deepEqual(DEFAULT_QUOTA.hard, {
      pods: "50",
      "requests.cpu": "20",
      "requests.memory": "64Gi",
      "limits.cpu": "40",
      "limits.memory": "128Gi",
    });
    assert.deepEqual(
      find(plain.apply, "LimitRange", "openbao-operator-tenant-limits")?.["spec"],
      DEFAULT_LIMIT_RANGE,
    );
    const quota = { hard: { pods: "5" } };
    const limitRange = { limits: [{ type: "Pod", max: { cpu: "2" } }] };
    const own = planTenant({
      tenant: tenant("team-a", "team-a", { quota, limitRange }),
      clusters: [],
      operator: OPERATOR,
    });
    assert.ok(!own.refused);
    assert.deepEqual(find(own.apply, "ResourceQuota", TenantObjectNames.resourceQuota)?.["spec"], quota);
    assert.deepEqual(find(own.apply, "LimitRange", TenantObjectNames.limitRange)?.["spec"], limitRange);
  });

  it("has no Secret Roles while the namespace holds no cluster, and removes any left", () => {
    const plan = planTenant({ tenant: tenant("team-a", "team-a"), clusters: [], operator: OPERATOR });
    assert.ok(!plan.refused);
    assert.equal(find(plan.apply, "Role", TenantObjectNames.secretsWriterRole), undefined);
    assert.deepEqual(plan.remove, [
      { kind: "RoleBinding", name: "openbao-operator-tenant-secrets-writer-rolebinding" },
      { kind: "Role", name: "openbao-operator-tenant-secrets-writer" },
      { kind: "RoleBinding", name: "openbao-operator-tenant-secrets-reader-rolebinding" },
      { kind: "Role", name: "openbao-operator-tenant-secrets-reader" },
    ]);
  });

  it("writes and reads Secrets only under the clusters' names", () => {
    const clusters = [
      cluster("a"),
      cluster("b", {
        selfInit: { enabled: true },
        unseal: { type: "transit", credentialsSecretRef: { name: "transit-token" } },
        tls: { mode: "External", serverSecretName: "my-server" },
        backup: { target: { credentialsSecretRef: { name: "s3" } }, tokenSecretRef: { name: "" } },
        upgrade: { tokenSecretRef: { name: "upgrade-token" } },
      }),
    ];
    const plan = planTenant({ tenant: tenant("team-a", "team-a"), clusters, operator: OPERATOR });
    assert.ok(!plan.refused);
    assert.deepEqual(plan.remove, []);
    const writer = find(plan.apply, "Role", "openbao-operator-tenant-secrets-writer");
    assert.deepEqual(writer?.["rules"], [
      { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
      {
        apiGroups: [""],
        resources: ["secrets"],
        resourceNames: [
          "a-root-token",
          "a-tls-ca",
          "a-tls-server",
          "a-unseal-key",
          "b-seal-credentials",
          "b-self-init",
        ],
        verbs: ["get", "patch", "delete"],
      },
    ]);
    const reader = find(plan.apply, "Role", "openbao-operator-tenant-secrets-reader");
    assert.deepEqual(reader?.["rules"], [
      {
        apiGroups: [""],
        resources: ["secrets"],
        resourceNames: ["b-tls-ca", "my-server", "s3", "transit-token", "upgrade-token"],
        verbs: ["get"],
      },
    ]);
    for (const name of ["openbao-operator-tenant-secrets-writer", "openbao-operator-tenant-secrets-reader"])
      assert.deepEqual(find(plan.apply, "RoleBinding", `${name}-rolebinding`)?.["roleRef"], {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name,
      });
  });

  it("lets the restore controller read a restore's credentials, and never lists a written name as read", () => {
    const restore = {
      spec: { cluster: "a", source: { key: "k", target: { credentialsSecretRef: { name: "s3-restore" } } } },
    } as unknown as OpenBaoRestore;
    const lists = secretAllowLists(
      [cluster("a", { unseal: { type: "transit", credentialsSecretRef: { name: "a-tls-ca" } } })],
      [restore],
    );
    assert.deepEqual(lists.read, ["s3-restore"]);
    assert.ok(lists.write.includes("a-tls-ca"));
  });
});

describe("openbao tenant: offboarding", () => {
  it("waits while a cluster remains, then removes the Secret Roles and the tenant Role, bindings first", () => {
    assert.deepEqual(planOffboarding(2), { waitFor: 2 });
    const plan = planOffboarding(0);
    assert.ok("remove" in plan);
    assert.deepEqual(
      plan.remove.map((r) => `${r.kind}/${r.name}`),
      [
        "RoleBinding/openbao-operator-tenant-secrets-writer-rolebinding",
        "Role/openbao-operator-tenant-secrets-writer",
        "RoleBinding/openbao-operator-tenant-secrets-reader-rolebinding",
        "Role/openbao-operator-tenant-secrets-reader",
        "RoleBinding/openbao-operator-tenant-rolebinding",
        "Role/openbao-operator-tenant-role",
      ],
    );
  });
});

describe("openbao tenant: the Role matches what the chart grants per namespace", () => {
  it("has the chart's rules for the openbao target, Secrets apart", () => {
    const tpl = readFileSync(
      new URL("../../../deploy/chart/platform-operator/templates/_targets.tpl", import.meta.url),
      "utf8",
    );
    const block = /\{\{- define "po\.namespacedRules\.openbao" -\}\}\n([\s\S]*?)\{\{- end -\}\}/.exec(
      tpl,
    )?.[1];
    assert.ok(block, "the chart's po.namespacedRules.openbao block");
    const chart = parse(block) as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const withoutSecrets = chart.filter((r) => !r.resources.includes("secrets"));
    assert.equal(withoutSecrets.length, chart.length - 1);
    assert.deepEqual(withoutSecrets, TARGET_RULES_WITHOUT_SECRETS);
    const tenantBlock = /\{\{- define "po\.tenantRules\.openbao" -\}\}\n([\s\S]*?)\{\{- end -\}\}/.exec(
      tpl,
    )?.[1];
    assert.ok(tenantBlock, "the chart's po.tenantRules.openbao block");
    assert.deepEqual(parse(tenantBlock), TENANT_KIND_RULES);
    assert.deepEqual(TENANT_ROLE_RULES, [
      ...TARGET_RULES_WITHOUT_SECRETS,
      ...TENANT_KIND_RULES,
      TENANT_ROLE_RULES.at(-1),
    ]);
    assert.deepEqual(TENANT_ROLE_RULES.at(-1), {
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["list", "watch"],
    });
  });
});

describe("openbao tenant: the configuration switch", () => {
  it("is off unless enabled, and then needs the openbao process's ServiceAccount", async () => {
    const { parseOpenBaoConfig } = await import("../../src/targets/openbao/config.js");
    assert.equal(parseOpenBaoConfig({}, "t").tenants, undefined);
    assert.equal(
      parseOpenBaoConfig({ tenants: { enabled: false, serviceAccount: "sa" } }, "t").tenants,
      undefined,
    );
    assert.deepEqual(parseOpenBaoConfig({ tenants: { enabled: true, serviceAccount: "sa" } }, "t").tenants, {
      serviceAccount: "sa",
    });
    assert.deepEqual(
      parseOpenBaoConfig({ tenants: { enabled: true, serviceAccount: "sa", operatorNamespace: "op" } }, "t")
        .tenants,
      { serviceAccount: "sa", operatorNamespace: "op" },
    );
    assert.throws(
      () => parseOpenBaoConfig({ tenants: { enabled: true } }, "t"),
      /t\.tenants\.serviceAccount/,
    );
    assert.throws(() => parseOpenBaoConfig({ tenants: { enabled: true, mode: "multi" } }, "t"), /mode/);
  });

  it("has one OpenBao token audience, upstream's openbao-internal unless configured", async () => {
    const { parseOpenBaoConfig, DEFAULT_OPENBAO_AUDIENCE } = await import(
      "../../src/targets/openbao/config.js"
    );
    assert.equal(DEFAULT_OPENBAO_AUDIENCE, "openbao-internal");
    assert.equal(parseOpenBaoConfig({}, "t").openBaoAudience, "openbao-internal");
    assert.equal(parseOpenBaoConfig({ openBaoAudience: "corp-bao" }, "t").openBaoAudience, "corp-bao");
    assert.throws(() => parseOpenBaoConfig({ openBaoAudience: "" }, "t"), /t\.openBaoAudience/);
    assert.throws(() => parseOpenBaoConfig({ openBaoAudience: "a b" }, "t"), /t\.openBaoAudience/);
  });

  it("reads upstream's namespacePodSecurityLabels mode and denied namespace lists, naming a bad field", async () => {
    const { parseOpenBaoConfig } = await import("../../src/targets/openbao/config.js");
    const t = (extra: object) =>
      parseOpenBaoConfig({ tenants: { enabled: true, serviceAccount: "sa", ...extra } }, "t").tenants;
    assert.equal(t({})?.namespacePodSecurityLabels, undefined, "enforce is the default");
    assert.equal(t({ namespacePodSecurityLabels: "enforce" })?.namespacePodSecurityLabels, undefined);
    assert.equal(t({ namespacePodSecurityLabels: "external" })?.namespacePodSecurityLabels, "external");
    assert.throws(
      () => t({ namespacePodSecurityLabels: "Rancher" }),
      /t\.tenants\.namespacePodSecurityLabels/,
    );
    assert.equal(t({})?.denied, undefined, "upstream's lists (the guard's default)");
    assert.deepEqual(t({ deniedNamespaces: ["platform"] })?.denied, {
      names: ["platform"],
      prefixes: ["kube-", "openshift-", "gke-", "eks-", "aws-", "aks-", "azure-"],
    });
    assert.deepEqual(t({ deniedNamespaces: [], deniedNamespacePrefixes: ["corp-"] })?.denied, {
      names: [],
      prefixes: ["corp-"],
    });
    assert.throws(() => t({ deniedNamespaces: ["Bad_Name"] }), /t\.tenants\.deniedNamespaces\[0\]/);
    assert.throws(() => t({ deniedNamespacePrefixes: ["ok-", ""] }), /t\.tenants\.deniedNamespacePrefixes/);
    assert.throws(() => t({ deniedNamespacePrefixes: "kube-" }), /t\.tenants\.deniedNamespacePrefixes/);
  });
});
