import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { TenantObjectNames as N } from "../../src/targets/openbao/tenant/plan.js";
import { TENANT_KIND_RULES } from "../../src/targets/openbao/tenant/rules.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { BUILTIN_METRIC, registeredMetrics } from "../support/metrics-registry.js";
import { baseMetric, metricNames } from "../support/promql.js";

// The operator's own chart, rendered by the real helm: topologies, least privilege, pod security
// and the gates on optional kinds. Installing it on the node is chart-install.test.ts.

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are arbitrary objects
type Obj = Record<string, any>;
type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[]; resourceNames?: string[] };

let helm: string;

async function render(args: string[]): Promise<Obj[]> {
  const out = await runCommand(helm, ["template", "po", CHART, "--namespace", "ops", ...args]);
  return parseAllDocuments(out.stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

async function renderFails(args: string[]): Promise<string> {
  try {
    await runCommand(helm, ["template", "po", CHART, "--namespace", "ops", ...args]);
  } catch (e) {
    return (e as Error).message;
  }
  assert.fail(`rendering with ${args.join(" ")} succeeded`);
}

const ofKind = (objs: Obj[], kind: string) => objs.filter((o) => o.kind === kind);
const ALL_TARGETS = [
  "--set=targets.openbao.enabled=true",
  "--set=targets.gitlab.enabled=true",
  "--set=targets.vault.namespaces={team-a,team-b}",
  "--set=targets.openbao.namespaces={bao}",
  "--set=targets.gitlab.namespaces={gitlab}",
];

const MONITORING_KINDS = [
  "--api-versions=monitoring.coreos.com/v1/PodMonitor",
  "--api-versions=monitoring.coreos.com/v1/PrometheusRule",
];
/** The alerts document 003 names ("Operating"). */
const SPEC_ALERTS = [
  "OhmlabControllerDown",
  "OhmlabObjectNotReady",
  "OhmlabReconcileStale",
  "OhmlabBackendErrors",
  "OhmlabBackendForbidden",
  "OhmlabWriteLoop",
  "OhmlabCRDRevisionMismatch",
  // Not in document 003: rotate.every (issue 28) came after it.
  "OhmlabRotationOverdue",
  // Not in document 003: alerts on upstream openbao-operator's metrics, which its users bring.
  "OpenBaoCertificateExpiring",
  "OpenBaoBackupsFailing",
  "OpenBaoUpgradeStuck",
  // Not in a document: restore tests of the backups (spec.backup.restoreTest, issue 45).
  "OpenBaoBackupVerificationFailed",
  "OpenBaoBackupUnverified",
];
/** Every metric name the operator's registry holds once each target's metrics are loaded. */
const exportedMetrics = async (): Promise<Set<string>> => new Set((await registeredMetrics()).keys());

function processConfig(objs: Obj[], name: string): Obj {
  const cm = ofKind(objs, "ConfigMap").find((c) => c.metadata.name === name);
  assert.ok(cm, `ConfigMap ${name}`);
  const [doc] = parseAllDocuments(cm.data["config.yaml"]);
  return doc!.toJS() as Obj;
}

describe("the operator's Helm chart, rendered by real helm", () => {
  before(async () => {
    helm = await ensureHelm();
  });

  it("lints clean with its defaults", async () => {
    const out = await runCommand(helm, ["lint", "--strict", CHART]);
    assert.match(out.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    assert.doesNotMatch(out.stdout, /\[(ERROR|WARNING)\]/);
  });

  it("ships exactly the CRDs generated from src/apis (deploy/crds, so they cannot drift)", async () => {
    const { allKinds } = await import("../../src/apis/index.js");
    const objs = await render(["--include-crds"]);
    const shipped = ofKind(objs, "CustomResourceDefinition");
    const generated = allKinds.map((k) => k.crd);
    assert.deepEqual(
      shipped.map((c) => c.metadata.name).sort(),
      generated.map((c) => c.metadata.name).sort(),
    );
    for (const crd of generated) {
      const inChart = shipped.find((c) => c.metadata.name === crd.metadata.name);
      assert.deepEqual(
        inChart,
        JSON.parse(JSON.stringify(crd)),
        `${crd.metadata.name} in the chart is the generated one`,
      );
    }
  });

  it("splits by default: one Deployment, ServiceAccount and configuration per enabled target", async () => {
    const objs = await render(ALL_TARGETS);
    const deployments = ofKind(objs, "Deployment")
      .map((d) => d.metadata.name)
      .sort();
    assert.deepEqual(deployments, ["po-gitlab", "po-openbao", "po-vault"]);
    assert.deepEqual(
      ofKind(objs, "ServiceAccount")
        .map((s) => s.metadata.name)
        .sort(),
      deployments,
    );
    for (const t of ["vault", "openbao", "gitlab"]) {
      const cfg = processConfig(objs, `po-${t}`);
      assert.deepEqual(Object.keys(cfg.targets), [t], `process po-${t} gets only its own section`);
      assert.equal(cfg.leaderElection.leaseName, `po-${t}`);
    }
    assert.deepEqual(processConfig(objs, "po-vault").targets.vault.namespaces, ["team-a", "team-b"]);
    for (const d of ofKind(objs, "Deployment")) assert.equal(d.spec.replicas, 2);
  });

  it("groups targets into shared processes, each enabled target exactly once", async () => {
    const objs = await render([...ALL_TARGETS, "--set=deployments.all={vault,openbao,gitlab}"]);
    assert.deepEqual(
      ofKind(objs, "Deployment").map((d) => d.metadata.name),
      ["po-all"],
    );
    assert.deepEqual(Object.keys(processConfig(objs, "po-all").targets).sort(), [
      "gitlab",
      "openbao",
      "vault",
    ]);
    const twice = await renderFails([
      ...ALL_TARGETS,
      "--set=deployments.a={vault,openbao}",
      "--set=deployments.b={vault,gitlab}",
    ]);
    assert.match(twice, /target "vault" is in both a and b/);
    const missing = await renderFails([...ALL_TARGETS, "--set=deployments.a={vault,openbao}"]);
    assert.match(missing, /enabled target "gitlab" is in no process/);
    const disabled = await renderFails(["--set=deployments.a={vault,openbao}"]);
    assert.match(disabled, /"openbao" is not an enabled target/);
    const unknown = await renderFails(["--set=deployments.a={vault,harbor}"]);
    assert.match(unknown, /deployments\.a\.1|harbor|value must be one of/);
  });

  it("grants the vault target no Secrets, Roles only in its namespaces, and its CRD by name", async () => {
    const objs = await render(ALL_TARGETS);
    const roles = ofKind(objs, "Role").filter((r) => r.metadata.name === "po-vault-vault");
    assert.deepEqual(roles.map((r) => r.metadata.namespace).sort(), ["team-a", "team-b"]);
    const vaultRules: Rule[] = [
      ...roles.flatMap((r) => r.rules),
      ...ofKind(objs, "ClusterRole").find((c) => c.metadata.name === "ops-po-vault")!.rules,
      ...ofKind(objs, "Role").find((r) => r.metadata.name === "po-vault-leases")!.rules,
    ];
    for (const rule of vaultRules) {
      assert.ok(
        !(rule.resources ?? []).includes("secrets"),
        `vault rule grants secrets: ${JSON.stringify(rule)}`,
      );
      assert.ok(!rule.verbs.includes("*") && !(rule.resources ?? []).includes("*"), "no wildcards");
    }
    const crdRule = vaultRules.find((r) => r.resources?.includes("customresourcedefinitions"));
    assert.deepEqual(crdRule?.resourceNames, ["vaultseeds.ohmlab.fr"]);
    assert.deepEqual(crdRule?.verbs, ["get"]);
    const clusterBindings = ofKind(objs, "ClusterRoleBinding").map((b) => b.roleRef.name);
    assert.ok(
      !ofKind(objs, "ClusterRole").some(
        (c) =>
          clusterBindings.includes(c.metadata.name) &&
          c.rules.some((r: Rule) => (r.resources ?? []).some((x) => x.startsWith("vaultseeds"))),
      ),
      "VaultSeeds are never granted cluster-wide",
    );
    const leases = ofKind(objs, "Role").find((r) => r.metadata.name === "po-vault-leases")!;
    assert.deepEqual(leases.rules[1].resourceNames, ["po-vault-vault"]);
  });

  it("grants the openbao target Roles in its namespaces, and in default only reads of the API server's address", async () => {
    const objs = await render(ALL_TARGETS);
    const roles = ofKind(objs, "Role").filter((r) => r.metadata.name.startsWith("po-openbao-openbao"));
    assert.deepEqual(roles.map((r) => `${r.metadata.namespace}/${r.metadata.name}`).sort(), [
      "bao/po-openbao-openbao",
      "default/po-openbao-openbao-apiserver",
      "ops/po-openbao-openbao-self-token",
    ]);
    // selfInit.oidc clusters: a token of the operator's own ServiceAccount, and nothing else.
    const selfToken = roles.find((r) => r.metadata.name === "po-openbao-openbao-self-token")!;
    assert.deepEqual(selfToken.rules, [
      {
        apiGroups: [""],
        resources: ["serviceaccounts/token"],
        resourceNames: ["po-openbao"],
        verbs: ["create"],
      },
    ]);
    const inDefault = roles.find((r) => r.metadata.namespace === "default")!;
    for (const rule of inDefault.rules as Rule[]) {
      assert.deepEqual(
        rule.verbs.filter((v) => !["get", "list", "watch"].includes(v)),
        [],
        "read-only",
      );
    }
    assert.deepEqual(inDefault.rules[0].resourceNames, ["kubernetes"]);
    // The cluster's Gateway API routes are watched where they are served (an informer per kind).
    const own = roles.find((r) => r.metadata.namespace === "bao")!;
    const routes = (own.rules as Rule[]).find((r) => r.apiGroups?.includes("gateway.networking.k8s.io"));
    assert.deepEqual(routes?.resources, ["httproutes", "tlsroutes", "backendtlspolicies"]);
    for (const verb of ["list", "watch"]) assert.ok(routes?.verbs.includes(verb), `routes: ${verb}`);
    const binding = ofKind(objs, "RoleBinding").find(
      (b) => b.metadata.name === "po-openbao-openbao-apiserver",
    )!;
    assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "po-openbao", namespace: "ops" }]);
    for (const rule of ofKind(objs, "Role").flatMap((r) => r.rules as Rule[]))
      assert.ok(!rule.verbs.includes("*") && !(rule.resources ?? []).includes("*"), "no wildcards");
  });

  it("runs restricted: non-root numeric user, read-only root, no capabilities, RuntimeDefault seccomp", async () => {
    const objs = await render(ALL_TARGETS);
    for (const d of ofKind(objs, "Deployment")) {
      const pod = d.spec.template.spec;
      assert.equal(pod.securityContext.runAsNonRoot, true);
      assert.equal(typeof pod.securityContext.runAsUser, "number");
      assert.equal(pod.securityContext.seccompProfile.type, "RuntimeDefault");
      assert.equal(pod.automountServiceAccountToken, false);
      for (const c of pod.containers) {
        assert.equal(c.securityContext.readOnlyRootFilesystem, true);
        assert.equal(c.securityContext.allowPrivilegeEscalation, false);
        assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
      }
    }
  });

  it("watches the vault target's application namespaces with a Role each and passes their prefixes", async () => {
    const apps = [
      ...ALL_TARGETS,
      "--set=targets.vault.applications.shop.write={secret/apps/shop/}",
      "--set=targets.vault.applications.shop.read={secret/shared/smtp/}",
      "--set=targets.vault.applications.blog.write={secret/apps/blog/}",
    ];
    const objs = await render(apps);
    const roles = ofKind(objs, "Role").filter((r) => r.metadata.name === "po-vault-vault");
    assert.deepEqual(roles.map((r) => r.metadata.namespace).sort(), ["blog", "shop", "team-a", "team-b"]);
    const platformRole = roles.find((r) => r.metadata.namespace === "team-a")!;
    for (const r of roles) assert.deepEqual(r.rules, platformRole.rules, "the same rules, no more");
    const bindings = ofKind(objs, "RoleBinding").filter((b) => b.metadata.name === "po-vault-vault");
    assert.deepEqual(bindings.map((b) => b.metadata.namespace).sort(), ["blog", "shop", "team-a", "team-b"]);
    const vault = processConfig(objs, "po-vault").targets.vault;
    assert.deepEqual([...vault.namespaces].sort(), ["blog", "shop", "team-a", "team-b"]);
    assert.deepEqual(vault.applications, {
      blog: { write: ["secret/apps/blog/"] },
      shop: { write: ["secret/apps/shop/"], read: ["secret/shared/smtp/"] },
    });
    // The operator's own parser takes what the chart renders.
    const { parseVaultConfig } = await import("../../src/targets/vault/config.js");
    const { namespaces: _ns, ...section } = vault;
    assert.equal(parseVaultConfig(section, "targets.vault").applications.size, 2);
    assert.match(
      await renderFails([...ALL_TARGETS, "--set=targets.vault.applications.team-a.write={secret/apps/a/}"]),
      /applications\.team-a: the namespace is also in targets\.vault\.namespaces/,
    );
    assert.match(
      await renderFails([...ALL_TARGETS, "--set=targets.vault.applications.shop.read={x/}"]),
      /write/,
    );
  });

  it("gives the vault target a projected token with audience vault and a ten-minute life", async () => {
    const objs = await render(ALL_TARGETS);
    const vault = ofKind(objs, "Deployment").find((d) => d.metadata.name === "po-vault")!;
    const projected = vault.spec.template.spec.volumes.find((v: Obj) => v.name === "vault-token");
    assert.deepEqual(projected.projected.sources[0].serviceAccountToken, {
      path: "token",
      audience: "vault",
      expirationSeconds: 600,
    });
    const cfg = processConfig(objs, "po-vault");
    assert.equal(
      cfg.targets.vault.backend.auth.kubernetes.tokenFile,
      "/var/run/secrets/platform-operator/vault/token",
    );
    const others = ofKind(objs, "Deployment").filter((d) => d.metadata.name !== "po-vault");
    for (const d of others) {
      assert.ok(
        !d.spec.template.spec.volumes.some((v: Obj) => v.name === "vault-token"),
        "only the vault process gets it",
      );
    }
  });

  it("sets V8 heap flags from the container memory limit, as `node-options` computes them", async () => {
    const objs = await render(["--set=resources.limits.memory=512Mi"]);
    const env = ofKind(objs, "Deployment")[0]!.spec.template.spec.containers[0].env as Obj[];
    const { heapFlagsFor } = await import("../../src/cli/heap.js");
    assert.equal(
      env.find((e) => e.name === "NODE_OPTIONS")?.value,
      heapFlagsFor(512 * 1024 * 1024).join(" "),
    );
    // Each step of the semi-space (1, 2, 4, 8, 16 MiB) and a decimal unit.
    const limits: Record<string, number> = {
      "100Mi": 100 * 1024 ** 2,
      "256Mi": 256 * 1024 ** 2,
      "1Gi": 1024 ** 3,
      "2G": 2e9,
      "3Gi": 3 * 1024 ** 3,
      "4Gi": 4 * 1024 ** 3,
    };
    for (const [limit, bytes] of Object.entries(limits)) {
      const o = await render([`--set=resources.limits.memory=${limit}`]);
      const v = (o.find((x) => x.kind === "Deployment")!.spec.template.spec.containers[0].env as Obj[]).find(
        (e) => e.name === "NODE_OPTIONS",
      )?.value;
      assert.equal(v, heapFlagsFor(bytes).join(" "), limit);
    }
  });

  it("sets the runtime's environment (one malloc arena) in every operator process", async () => {
    const { RUNTIME_ENV } = await import("../../src/cli/heap.js");
    const objs = await render(ALL_TARGETS);
    const deployments = ofKind(objs, "Deployment");
    assert.ok(deployments.length > 1, "one process per target");
    for (const d of deployments) {
      const env = d.spec.template.spec.containers[0].env as Obj[];
      for (const [name, value] of Object.entries(RUNTIME_ENV))
        assert.equal(env.find((e) => e.name === name)?.value, value, `${d.metadata.name}: ${name}`);
    }
  });

  it("renders the PodMonitor and alert rules only where the Prometheus Operator's kinds are served", async () => {
    const without = await render(ALL_TARGETS);
    assert.equal(ofKind(without, "PodMonitor").length, 0);
    assert.equal(ofKind(without, "PrometheusRule").length, 0);
    const withCrds = await render([...ALL_TARGETS, ...MONITORING_KINDS]);
    assert.equal(ofKind(withCrds, "PodMonitor").length, 3);
    const rules = ofKind(withCrds, "PrometheusRule");
    assert.deepEqual(rules.map((r) => r.metadata.name).sort(), ["po-gitlab", "po-openbao", "po-vault"]);
    // Only the enabled targets get their rules.
    const vaultOnly = ofKind(await render(MONITORING_KINDS), "PrometheusRule");
    assert.deepEqual(
      vaultOnly.map((r) => r.metadata.name),
      ["po-vault"],
    );
  });

  it("alerts for every target with the document's alert names, on metrics the operator exports", async () => {
    const rules = ofKind(await render([...ALL_TARGETS, ...MONITORING_KINDS]), "PrometheusRule");
    const exported = await exportedMetrics();
    for (const target of ["vault", "openbao", "gitlab"]) {
      const rule = rules.find((r) => r.metadata.name === `po-${target}`);
      assert.ok(rule, `the ${target} target's PrometheusRule`);
      const alerts: Obj[] = rule.spec.groups.flatMap((g: Obj) => g.rules);
      const names = alerts.map((a) => a.alert as string);
      for (const name of names)
        assert.ok(SPEC_ALERTS.includes(name), `${target}: ${name} is not an alert the document names`);
      // Every target can say it is down, that its objects are not ready, stale or failing.
      for (const name of [
        "OhmlabControllerDown",
        "OhmlabObjectNotReady",
        "OhmlabReconcileStale",
        "OhmlabBackendErrors",
      ])
        assert.ok(names.includes(name), `${target} has no ${name}`);
      for (const alert of alerts) {
        assert.ok(
          alert.for && alert.labels?.severity && alert.annotations?.summary,
          `${target}/${alert.alert} is complete`,
        );
        for (const metric of metricNames(alert.expr)) {
          assert.ok(
            exported.has(metric.replace(/_(bucket|sum|count)$/, "")) || metric === "up",
            `${target}/${alert.alert} queries ${metric}, which the operator does not export`,
          );
        }
      }
    }
  });

  it("ships the operator's dashboard and each enabled target's, querying only metrics the operator exports", async () => {
    const dashboardsOf = async (args: string[]) => {
      const objs = await render(args);
      const cm = ofKind(objs, "ConfigMap").find((c) => c.metadata.labels?.grafana_dashboard === "1");
      assert.ok(cm, "the dashboard ConfigMap");
      return cm.data as Record<string, string>;
    };
    assert.deepEqual(Object.keys(await dashboardsOf([])).sort(), ["platform-operator.json", "vault.json"]);
    const all = await dashboardsOf(ALL_TARGETS);
    assert.deepEqual(Object.keys(all).sort(), [
      "gitlab.json",
      "openbao.json",
      "platform-operator.json",
      "vault.json",
    ]);
    const exported = await exportedMetrics();
    for (const [file, text] of Object.entries(all)) {
      const dashboard = JSON.parse(text) as Obj;
      // Row panels hold no queries.
      const exprs: string[] = dashboard.panels.flatMap((p: Obj) => (p.targets ?? []).map((t: Obj) => t.expr));
      assert.ok(exprs.length >= 10, file);
      for (const expr of exprs)
        for (const name of metricNames(expr)) {
          const base = baseMetric(name);
          if (BUILTIN_METRIC.test(base)) continue;
          assert.ok(exported.has(base), `${file} queries ${name}, which is not exported`);
        }
    }
  });

  it("reads metric names out of PromQL (the check above must be able to fail)", () => {
    assert.deepEqual(
      metricNames(
        'absent(max(leader_election_master_status{name=~".+-openbao"}) == 1) or sum by (namespace, step) (increase(openbao_reconcile_errors_total[15m])) > 0 and on() count(x_total) > 0',
      ),
      ["leader_election_master_status", "openbao_reconcile_errors_total", "x_total"],
    );
    assert.deepEqual(
      metricNames('histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{job="$job"}[5m])))'),
      ["a_seconds_bucket"],
    );
  });

  it("denies by default when the NetworkPolicy is on, with egress to DNS, the API server and extraEgress", async () => {
    const objs = await render([
      "--set=networkPolicy.enabled=true",
      "--set=networkPolicy.apiServer.cidrs={10.0.0.1/32}",
      '--set-json=networkPolicy.extraEgress=[{"to":[{"ipBlock":{"cidr":"10.9.0.0/16"}}],"ports":[{"port":8200}]}]',
    ]);
    const [np] = ofKind(objs, "NetworkPolicy");
    assert.deepEqual(np!.spec.policyTypes, ["Ingress", "Egress"]);
    const cidrs = np!.spec.egress
      .flatMap((e: Obj) => (e.to ?? []).map((t: Obj) => t.ipBlock?.cidr))
      .filter(Boolean);
    assert.deepEqual(cidrs.sort(), ["10.0.0.1/32", "10.9.0.0/16"]);
    assert.equal(ofKind(await render([]), "NetworkPolicy").length, 0, "off by default");
  });

  it("guards ingress only when the API server's addresses are not given: a deny would cut the operator off it", async () => {
    const [np] = ofKind(await render(["--set=networkPolicy.enabled=true"]), "NetworkPolicy");
    assert.deepEqual(np!.spec.policyTypes, ["Ingress"]);
    assert.equal(np!.spec.egress, undefined);
    assert.deepEqual(
      np!.spec.ingress.flatMap((r: Obj) => r.ports.map((p: Obj) => p.port)).sort(),
      [8081, 8443],
    );
    assert.match(
      await renderFails([
        "--set=networkPolicy.enabled=true",
        '--set-json=networkPolicy.extraEgress=[{"to":[{"ipBlock":{"cidr":"10.9.0.0/16"}}]}]',
      ]),
      /networkPolicy\.extraEgress: egress is restricted only with networkPolicy\.apiServer\.cidrs/,
    );
  });

  it("webhook: per process a Service, a ValidatingWebhookConfiguration of its kinds only, RBAC by name", async () => {
    assert.equal(ofKind(await render([]), "ValidatingWebhookConfiguration").length, 0, "off by default");
    const objs = await render([
      ...ALL_TARGETS,
      "--set=webhook.enabled=true",
      "--set=networkPolicy.enabled=true",
      "--set=networkPolicy.apiServer.cidrs={10.0.0.1/32}",
    ]);
    const vwcs = ofKind(objs, "ValidatingWebhookConfiguration");
    const byName = new Map(vwcs.map((v) => [v.metadata.name, v]));
    const vault = byName.get("po-vault")!;
    assert.deepEqual(
      vault.webhooks.map((w: Obj) => [w.name, w.rules[0].apiGroups, w.rules[0].resources]),
      [["vault.ohmlab.fr", ["ohmlab.fr"], ["vaultseeds"]]],
    );
    const openbao = byName.get("po-openbao")!.webhooks[0];
    assert.deepEqual(openbao.rules[0].resources, ["openbaoclusters", "openbaorestores"]);
    assert.deepEqual(byName.get("po-gitlab")!.webhooks[0].rules[0].resources, ["gitlabcores"]);
    for (const w of vwcs.flatMap((v) => v.webhooks as Obj[])) {
      assert.equal(w.failurePolicy, "Fail");
      assert.equal(w.sideEffects, "None");
      assert.equal(w.matchPolicy, "Equivalent");
      assert.ok(w.timeoutSeconds <= 10);
      assert.deepEqual(w.rules[0].operations, ["CREATE", "UPDATE"]);
      assert.equal(w.clientConfig.service.path, "/validate");
    }
    const svc = ofKind(objs, "Service").find((s) => s.metadata.name === "po-vault-webhook")!;
    assert.deepEqual(svc.spec.ports, [{ name: "webhook", port: 443, targetPort: "webhook" }]);
    const cluster = ofKind(objs, "ClusterRole").find((c) => c.metadata.name === "ops-po-vault-webhook")!;
    assert.deepEqual(cluster.rules, [
      {
        apiGroups: ["admissionregistration.k8s.io"],
        resources: ["validatingwebhookconfigurations"],
        resourceNames: ["po-vault"],
        verbs: ["get", "patch"],
      },
    ]);
    const secrets = ofKind(objs, "Role").find((r) => r.metadata.name === "po-vault-webhook")!;
    assert.deepEqual(secrets.rules[1].resourceNames, ["po-vault-webhook-tls"]);
    const config = processConfig(objs, "po-vault") as { webhook: Obj };
    assert.equal(config.webhook.configurationName, "po-vault");
    assert.deepEqual(config.webhook.names, [
      "po-vault-webhook.ops.svc",
      "po-vault-webhook.ops.svc.cluster.local",
    ]);
    const np = ofKind(objs, "NetworkPolicy").find((n) => n.metadata.name === "po-vault")!;
    const ingress = np.spec.ingress.find((i: Obj) => i.ports[0].port === 9443);
    assert.deepEqual(ingress.from, [{ ipBlock: { cidr: "10.0.0.1/32" } }]);

    const withCm = await render(["--set=webhook.enabled=true", "--set=webhook.certManager.enabled=true"]);
    const cert = ofKind(withCm, "Certificate")[0]!;
    assert.equal(cert.spec.secretName, "po-vault-webhook-tls");
    assert.equal(
      ofKind(withCm, "ValidatingWebhookConfiguration")[0]!.metadata.annotations[
        "cert-manager.io/inject-ca-from"
      ],
      "ops/po-vault-webhook",
    );
    assert.equal(
      (processConfig(withCm, "po-vault") as { webhook: Obj }).webhook.certFile,
      "/etc/platform-operator/webhook-tls/tls.crt",
    );
    assert.equal(ofKind(withCm, "ClusterRole").filter((c) => c.metadata.name.endsWith("-webhook")).length, 0);
  });

  it("refuses values the schema does not know, naming them", async () => {
    const msg = await renderFails(["--set=replica=3"]);
    assert.match(msg, /replica/);
    const bad = await renderFails(["--set=targets.vault.namespaces={Team_A}"]);
    assert.match(bad, /namespaces/);
  });
  it("admission policies: none by default; with admissionPolicies.enabled five policies and their bindings, on the openbao namespaces", async () => {
    const kinds = ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"];
    const off = await render(ALL_TARGETS);
    assert.deepEqual(
      off.filter((o) => kinds.includes(o.kind)),
      [],
    );
    assert.equal(processConfig(off, "po-openbao").targets.openbao.admissionPolicies, undefined);
    const on = await render([...ALL_TARGETS, "--set=admissionPolicies.enabled=true"]);
    const names = [
      "validate-openbaocluster",
      "validate-openbaorestore",
      "validate-openbaotenant",
      "lock-controller-statefulset-mutations",
      "lock-managed-resource-mutations",
    ];
    for (const kind of kinds)
      assert.deepEqual(
        ofKind(on, kind)
          .map((o) => o.metadata.name)
          .sort(),
        names.map((n) => `po-${n}`).sort(),
      );
    for (const p of ofKind(on, "ValidatingAdmissionPolicy")) assert.equal(p.spec.failurePolicy, "Fail");
    for (const b of ofKind(on, "ValidatingAdmissionPolicyBinding")) {
      assert.deepEqual(b.spec.validationActions, ["Deny"]);
      assert.equal(b.spec.policyName, b.metadata.name);
      assert.deepEqual(b.spec.matchResources.namespaceSelector.matchExpressions[0].values, ["bao"]);
    }
    // The tenant rule's exception is the release's namespace, given to its CEL as a literal; the
    // start-up check reads only upstream's four, so the operator is granted no read of the tenant policy.
    const tenantPolicy = ofKind(on, "ValidatingAdmissionPolicy").find(
      (p) => p.metadata.name === "po-validate-openbaotenant",
    );
    assert.deepEqual(tenantPolicy?.spec.variables[0], { name: "operatorNamespace", expression: '"ops"' });
    assert.deepEqual(tenantPolicy?.spec.matchConstraints.resourceRules[0].resources, ["openbaotenants"]);
    const readable = ofKind(on, "ClusterRole").find((c) => c.metadata.name.endsWith("-admission-policies"));
    assert.ok(readable?.rules[0].resourceNames.includes("po-validate-openbaocluster"));
    assert.ok(!readable?.rules[0].resourceNames.includes("po-validate-openbaotenant"));
    // tenancy.mode multi: self-service tenants may be anywhere, so their binding is cluster-wide;
    // the others keep to the target's namespaces.
    const multi = await render([
      ...ALL_TARGETS,
      "--set=admissionPolicies.enabled=true",
      "--set=tenancy.mode=multi",
    ]);
    for (const b of ofKind(multi, "ValidatingAdmissionPolicyBinding"))
      if (
        ["po-validate-openbaotenant", "po-restrict-provisioner-namespace-mutations"].includes(b.metadata.name)
      )
        assert.equal(b.spec.matchResources, undefined);
      else assert.deepEqual(b.spec.matchResources.namespaceSelector.matchExpressions[0].values, ["bao"]);
    // The operator's own ServiceAccount is the one the locks exempt, whatever process runs the target.
    const together = await render([
      ...ALL_TARGETS,
      "--set=admissionPolicies.enabled=true",
      "--set=deployments.all={vault,openbao,gitlab}",
    ]);
    const lock = ofKind(together, "ValidatingAdmissionPolicy").find(
      (p) => p.metadata.name === "po-lock-managed-resource-mutations",
    );
    assert.match(JSON.stringify(lock?.spec.variables), /system:serviceaccount:ops:po-all/);
    // The namespace controller (its own ServiceAccount) may delete only in a namespace being deleted:
    // a Retain cluster's root token has no owner, and nobody else would ever remove it.
    const teardown = lock?.spec.variables.find((v: { name: string }) => v.name === "namespaceTeardown");
    assert.match(teardown?.expression ?? "", /kube-system:namespace-controller/);
    assert.match(teardown?.expression ?? "", /has\(namespaceObject\.metadata\.deletionTimestamp\)/);
    assert.match(teardown?.expression ?? "", /request\.operation == "DELETE"/);
    assert.match(lock?.spec.validations[0].expression ?? "", /variables\.namespaceTeardown/);
    assert.deepEqual(processConfig(on, "po-openbao").targets.openbao.admissionPolicies, { prefix: "po-" });
    assert.match(await renderFails(["--set=admissionPolicies.enabled=true"]), /enable targets.openbao/);
  });

  it("tenancy: single by default; multi turns tenants on and grants the provisioner only what it plans, by name", async () => {
    const single = await render(ALL_TARGETS);
    assert.equal(processConfig(single, "po-openbao").targets.openbao.tenants, undefined);
    const clusterRules = (objs: Obj[]) =>
      ofKind(objs, "ClusterRole")
        .filter((r) => r.metadata.name === "ops-po-openbao")
        .flatMap((r) => r.rules as Rule[]);
    assert.ok(
      !clusterRules(single).some((r) => r.resources?.includes("openbaoclusters")),
      "single: no cluster-wide clusters",
    );

    const multi = await render([
      ...ALL_TARGETS,
      "--set=tenancy.mode=multi",
      "--set=tenancy.clusterSelector=team=a",
    ]);
    const cfg = processConfig(multi, "po-openbao").targets.openbao;
    assert.deepEqual(cfg.tenants, {
      enabled: true,
      serviceAccount: "po-openbao",
      operatorNamespace: "ops",
      clusterSelector: "team=a",
      deniedNamespaces: ["openshift"],
      deniedNamespacePrefixes: ["kube-", "openshift-", "gke-", "eks-", "aws-", "aks-", "azure-"],
    });
    assert.deepEqual(cfg.namespaces, ["bao"]);
    // The tenant objects the provisioner plans, each writable only under its own name.
    const rules = clusterRules(multi);
    const named = (resource: string) =>
      rules
        .filter((r) => r.resources?.includes(resource) && r.resourceNames)
        .flatMap((r) => r.resourceNames!);
    assert.deepEqual(named("roles").sort(), [N.role, N.secretsReaderRole, N.secretsWriterRole].sort());
    assert.deepEqual(
      named("rolebindings").sort(),
      [N.roleBinding, N.secretsReaderRoleBinding, N.secretsWriterRoleBinding].sort(),
    );
    assert.deepEqual(named("resourcequotas").sort(), [N.limitRange, N.resourceQuota].sort());
    for (const verb of ["escalate", "bind", "delete", "patch"])
      for (const r of rules.filter((x) => x.verbs.includes(verb)))
        if (r.apiGroups?.includes("rbac.authorization.k8s.io") || verb === "delete")
          assert.ok(r.resourceNames?.length, `${verb} on ${r.resources} only by name`);
    for (const r of rules)
      assert.ok(!r.verbs.includes("*") && !(r.resources ?? []).includes("*"), "no wildcards");
    // Everywhere: see clusters and say why one waits; never write their spec or their children.
    const everywhere = rules.filter((r) => r.apiGroups?.includes("openbao.org"));
    assert.deepEqual(everywhere, [
      { apiGroups: ["openbao.org"], resources: ["openbaoclusters"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["openbao.org"], resources: ["openbaoclusters/status"], verbs: ["patch"] },
      { apiGroups: ["openbao.org"], resources: ["openbaorestores"], verbs: ["list"] },
    ]);
    assert.ok(
      !rules.some((r) => r.resources?.some((x) => ["secrets", "statefulsets", "pods"].includes(x))),
      "no cluster-wide access to what a tenant Role grants",
    );
    // The tenants of the release's namespace, and self-service ones where the target reconciles.
    const roles = ofKind(multi, "Role");
    const tenantsRole = roles.find((r) => r.metadata.name === "po-openbao-openbao-tenants");
    assert.equal(tenantsRole?.metadata.namespace, "ops");
    const own = roles.find(
      (r) => r.metadata.name === "po-openbao-openbao" && r.metadata.namespace === "bao",
    )!;
    for (const r of TENANT_KIND_RULES)
      assert.ok((own.rules as Rule[]).some((x) => JSON.stringify(x) === JSON.stringify(r)));
    assert.match(
      await renderFails([
        ...ALL_TARGETS,
        "--set=tenancy.mode=multi",
        "--set=targets.openbao.config.tenants.enabled=true",
      ]),
      /set tenancy.mode: multi instead/,
    );
    assert.match(await renderFails(["--set=tenancy.mode=many"]), /tenancy.mode/);
  });
});
