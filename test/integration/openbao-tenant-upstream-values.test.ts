import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import type { OpenBaoTenant } from "../../src/apis/openbaotenant.js";
import { applyAny } from "../../src/runtime/apply.js";
import {
  NAMESPACE,
  VALIDATING_ADMISSION_POLICY,
  VALIDATING_ADMISSION_POLICY_BINDING,
} from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { type OpenBaoTargetConfig, parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { TenantObjectNames as N } from "../../src/targets/openbao/tenant/plan.js";
import { TenantProvisioner } from "../../src/targets/openbao/tenant/provisioner.js";
import { OPENBAOTENANT } from "../../src/targets/openbao/tenant/types.js";
import { tenantPolicy } from "../../src/targets/openbao/tenant/wiring.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { installOpenBaoClusterCrd, installOpenBaoTenantCrd } from "../support/openbao-cluster.js";
import {
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  clientWithToken,
  ROLE,
  ROLE_BINDING,
  serviceAccountAllowed,
  serviceAccountToken,
} from "../support/rbac.js";

// Upstream's tenancy values, end to end on the real API server: the chart (real helm) renders the
// operator's configuration and RBAC from them, the openbao target's own parser reads that
// configuration, and the provisioner runs as the chart's ServiceAccount with exactly that RBAC.
// tenancy.namespacePodSecurityLabels.mode external: a namespace's labels (a platform layer's) stay
// as they are while it is onboarded; admissionPolicies.provisionerRBAC: a namespace the lists deny is
// refused, and the tenant's status says which rule; enforce: the chart's namespace policy admits
// only the Pod Security labels at restricted, in a namespace the lists do not deny.

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));
const RBAC_KINDS = ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"];
const NS_POLICY = "restrict-provisioner-namespace-mutations";
const PLATFORM_LABELS = {
  "pod-security.kubernetes.io/enforce": "baseline",
  "pod-security.kubernetes.io/warn": "privileged",
  "field.cattle.io/projectId": "p-team",
};

/** The chart's objects for a multi-tenant release of the openbao target with `values`. */
async function renderRelease(release: string, namespace: string, values: string[]): Promise<KubeObject[]> {
  const out = await runCommand(await ensureHelm(), [
    "template",
    release,
    CHART,
    "--namespace",
    namespace,
    "--set=targets.vault.enabled=false",
    "--set=targets.openbao.enabled=true",
    "--set=tenancy.mode=multi",
    "--set=admissionPolicies.enabled=true",
    ...values,
  ]);
  return parseAllDocuments(out.stdout)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null && typeof o.kind === "string");
}

/** The openbao target's configuration as the chart renders it, read by the target's parser. */
function renderedConfig(objs: KubeObject[], configMap: string): OpenBaoTargetConfig {
  const cm = objs.find((o) => o.kind === "ConfigMap" && o.metadata.name === configMap) as
    | (KubeObject & { data: Record<string, string> })
    | undefined;
  assert.ok(cm, `ConfigMap ${configMap}`);
  const file = parseAllDocuments(cm.data["config.yaml"]!)[0]!.toJS() as {
    targets: { openbao: Record<string, unknown> };
  };
  const { namespaces: _ns, ...section } = file.targets.openbao;
  return parseOpenBaoConfig(section, "targets.openbao");
}

interface Release {
  opNs: string;
  name: string;
  sa: KubeClient;
  config: OpenBaoTargetConfig;
  cleanup(): Promise<void>;
}

/**
 * A release in a fresh namespace: its RBAC (and, when asked, its namespace policy) applied, the
 * openbao process's ServiceAccount, and a client with its token once the grant is in effect.
 */
async function installRelease(admin: KubeClient, values: string[], withNamespacePolicy: boolean) {
  const opNs = await freshNamespace(admin, "tenant-up-op");
  const release = `tu-${randomBytes(3).toString("hex")}`;
  const name = `${release}-openbao`;
  const objs = await renderRelease(release, opNs, values);
  const applied: KubeObject[] = [];
  for (const o of objs) {
    const policy = o.kind?.startsWith("ValidatingAdmissionPolicy") && o.metadata.name?.endsWith(NS_POLICY);
    if (!RBAC_KINDS.includes(o.kind!) && !(withNamespacePolicy && policy)) continue;
    await applyAny(admin, o as never, { fieldManager: "tests", force: true });
    applied.push(o);
  }
  const sa = clientWithToken(admin, await serviceAccountToken(admin, opNs, name));
  const can = (attributes: Record<string, string>) =>
    serviceAccountAllowed(admin, opNs, name, { resourceAttributes: attributes }, ["system:authenticated"]);
  // The authorizer reads bindings from its own cache: wait until it knows the grant by name.
  await eventually(
    () =>
      can({
        namespace: "anywhere",
        group: "rbac.authorization.k8s.io",
        resource: "roles",
        verb: "escalate",
        name: N.role,
      }),
    30_000,
    "the chart's grant in effect",
  );
  return {
    opNs,
    name,
    sa,
    can,
    config: renderedConfig(objs, name),
    async cleanup() {
      for (const o of applied) {
        const type =
          o.kind === "ClusterRole"
            ? CLUSTER_ROLE
            : o.kind === "ClusterRoleBinding"
              ? CLUSTER_ROLE_BINDING
              : o.kind === "ValidatingAdmissionPolicy"
                ? VALIDATING_ADMISSION_POLICY
                : o.kind === "ValidatingAdmissionPolicyBinding"
                  ? VALIDATING_ADMISSION_POLICY_BINDING
                  : undefined;
        if (type) await admin.delete(type, o.metadata.name!).catch(() => undefined);
      }
      sa.close();
    },
  } satisfies Release & { can: unknown };
}

const tenantIn = (ns: string, name: string, targetNamespace: string): OpenBaoTenant => ({
  apiVersion: "openbao.org/v1alpha1",
  kind: "OpenBaoTenant",
  metadata: { name, namespace: ns },
  spec: { targetNamespace },
});
const provisioned = (t: OpenBaoTenant) => t.status?.conditions?.find((c) => c.type === "Provisioned");

describe("openbao tenants with upstream's tenancy values (namespacePodSecurityLabels external, provisionerRBAC lists)", () => {
  let admin: KubeClient;
  let rel: Awaited<ReturnType<typeof installRelease>>;
  let events: EventRecorder;
  let provisioner: TenantProvisioner;
  let deniedName: string;
  let deniedPrefix: string;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    await installOpenBaoTenantCrd(admin);
    const run = randomBytes(3).toString("hex");
    // Names only this run uses, so the lists deny nothing of other files.
    deniedName = `tenant-up-no-${run}`;
    deniedPrefix = `tenant-up-deny-${run}-`;
    rel = await installRelease(
      admin,
      [
        "--set=tenancy.namespacePodSecurityLabels.mode=external",
        `--set-json=admissionPolicies.provisionerRBAC={"deniedNamespaces":["${deniedName}"],"deniedNamespacePrefixes":["${deniedPrefix}"]}`,
      ],
      false,
    );
    events = new EventRecorder(rel.sa, "platform-operator/openbao", "test", silentLogger());
    provisioner = new TenantProvisioner({
      client: rel.sa,
      events,
      operator: { namespace: rel.opNs, serviceAccount: rel.name },
      ...tenantPolicy(rel.config),
    });
  });
  after(async () => {
    await events?.flush();
    await rel?.cleanup();
    admin?.close();
  });

  it("the chart's configuration says external and the lists, and grants no namespace write", async () => {
    assert.equal(rel.config.tenants?.namespacePodSecurityLabels, "external");
    assert.deepEqual(rel.config.tenants?.denied, { names: [deniedName], prefixes: [deniedPrefix] });
    for (const verb of ["patch", "update"])
      assert.equal(await rel.can({ group: "", resource: "namespaces", verb, name: "any" }), false, verb);
    assert.equal(await rel.can({ group: "", resource: "namespaces", verb: "get", name: "any" }), true);
  });

  it("onboards a namespace whose labels a platform layer owns, and leaves them exactly as they are", async () => {
    const target = await freshNamespace(admin, "tenant-up-t");
    await admin.mergePatch(NAMESPACE, target, undefined, { metadata: { labels: PLATFORM_LABELS } });
    const before = await admin.get(NAMESPACE, target);
    await admin.create(OPENBAOTENANT, tenantIn(rel.opNs, "team", target));
    await provisioner.reconcile(await admin.get<OpenBaoTenant>(OPENBAOTENANT, "team", rel.opNs));
    const t = await admin.get<OpenBaoTenant>(OPENBAOTENANT, "team", rel.opNs);
    assert.equal(t.status?.lastError, undefined);
    assert.equal(t.status?.provisioned, true);
    assert.equal(provisioned(t)?.reason, "Provisioned");
    assert.match(provisioned(t)?.message ?? "", /Pod Security labels left to the platform/);
    for (const [type, name] of [
      [ROLE, N.role],
      [ROLE_BINDING, N.roleBinding],
    ] as const)
      assert.ok(await admin.getOrUndefined(type, name, target), name);
    const after = await admin.get(NAMESPACE, target);
    assert.deepEqual(after.metadata.labels, before.metadata.labels);
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion, "never written");
  });

  it("refuses a namespace the configured lists deny (a name, a prefix), saying which rule, touching nothing", async () => {
    for (const [target, rule] of [
      [deniedName, `denied namespace "${deniedName}"`],
      [`${deniedPrefix}a`, `denied prefix "${deniedPrefix}"`],
    ] as const) {
      await admin.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name: target } });
      const name = target === deniedName ? "by-name" : "by-prefix";
      await admin.create(OPENBAOTENANT, tenantIn(rel.opNs, name, target));
      await provisioner.reconcile(await admin.get<OpenBaoTenant>(OPENBAOTENANT, name, rel.opNs));
      const t = await admin.get<OpenBaoTenant>(OPENBAOTENANT, name, rel.opNs);
      assert.equal(t.status?.provisioned, false, target);
      assert.equal(provisioned(t)?.status, "False");
      assert.equal(provisioned(t)?.reason, "NamespaceNotAllowed");
      assert.ok(t.status?.lastError?.includes(rule), `${t.status?.lastError} names ${rule}`);
      assert.match(t.status?.lastError ?? "", /may not manage tenant RBAC in system namespaces/);
      assert.equal(t.metadata.finalizers, undefined, "refused before the finalizer");
      assert.equal(await admin.getOrUndefined(ROLE, N.role, target), undefined);
      await admin.delete(OPENBAOTENANT, name, rel.opNs);
      await admin.delete(NAMESPACE, target);
    }
  });
});

describe("openbao tenants with the chart's namespace policy (enforce mode, admissionPolicies.enabled)", () => {
  let admin: KubeClient;
  let rel: Awaited<ReturnType<typeof installRelease>>;
  let deniedName: string;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    deniedName = `tenant-up-pno-${randomBytes(3).toString("hex")}`;
    rel = await installRelease(
      admin,
      [`--set-json=admissionPolicies.provisionerRBAC={"deniedNamespaces":["${deniedName}"]}`],
      true,
    );
  });
  after(async () => {
    await rel?.cleanup();
    admin?.close();
  });

  /** The namespace patch as the chart's ServiceAccount: undefined when admitted, else the refusal. */
  const patchAsOperator = (ns: string, labels: Record<string, string>) =>
    rel.sa.mergePatch(NAMESPACE, ns, undefined, { metadata: { labels } }).then(
      () => undefined,
      (e: Error) => e.message,
    );

  it("admits the Pod Security labels at restricted, refuses any other label and any denied namespace", async () => {
    const ns = await freshNamespace(admin, "tenant-up-p");
    // The policy is in effect once the API server has compiled it: wait for the first refusal.
    const other = await eventually(
      // A new value each try: one admitted before the policy is in effect must not repeat unchanged.
      () => patchAsOperator(ns, { "team.example/owner": randomBytes(3).toString("hex") }),
      60_000,
      "the namespace policy refusing a label that is not Pod Security",
    );
    assert.match(other, /only set a namespace's Pod Security labels/);
    assert.match(
      (await patchAsOperator(ns, { "pod-security.kubernetes.io/enforce": "privileged" })) ?? "admitted",
      /only set a namespace's Pod Security labels/,
    );
    assert.equal(
      await patchAsOperator(ns, {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/warn": "restricted",
      }),
      undefined,
    );
    for (const denied of [deniedName, rel.opNs]) {
      if (denied === deniedName)
        await admin.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name: denied } });
      assert.match(
        (await patchAsOperator(denied, { "pod-security.kubernetes.io/enforce": "restricted" })) ?? "admitted",
        /may not change system namespaces/,
        denied,
      );
    }
    await admin.delete(NAMESPACE, deniedName);
  });
});
