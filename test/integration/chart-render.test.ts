import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";

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
    for (const limit of ["1Gi", "256Mi", "100Mi", "2G"]) {
      const o = await render([`--set=resources.limits.memory=${limit}`]);
      const v = (o.find((x) => x.kind === "Deployment")!.spec.template.spec.containers[0].env as Obj[]).find(
        (e) => e.name === "NODE_OPTIONS",
      )?.value;
      const bytes =
        limit === "1Gi"
          ? 1024 ** 3
          : limit === "256Mi"
            ? 256 * 1024 ** 2
            : limit === "100Mi"
              ? 100 * 1024 ** 2
              : 2e9;
      assert.equal(v, heapFlagsFor(bytes).join(" "), limit);
    }
  });

  it("renders the PodMonitor and alert rules only where the Prometheus Operator's kinds are served", async () => {
    const without = await render(ALL_TARGETS);
    assert.equal(ofKind(without, "PodMonitor").length, 0);
    assert.equal(ofKind(without, "PrometheusRule").length, 0);
    const withCrds = await render([
      ...ALL_TARGETS,
      "--api-versions=monitoring.coreos.com/v1/PodMonitor",
      "--api-versions=monitoring.coreos.com/v1/PrometheusRule",
    ]);
    assert.equal(ofKind(withCrds, "PodMonitor").length, 3);
    const rules = ofKind(withCrds, "PrometheusRule");
    assert.ok(rules.some((r) => r.metadata.name === "po-vault"));
    const alerts = rules.flatMap((r) => r.spec.groups.flatMap((g: Obj) => g.rules.map((x: Obj) => x.alert)));
    assert.ok(alerts.includes("OhmlabControllerDown"));
  });

  it("ships a Grafana dashboard that queries only metrics the operator exports", async () => {
    const objs = await render([]);
    const cm = ofKind(objs, "ConfigMap").find((c) => c.metadata.labels?.grafana_dashboard === "1");
    assert.ok(cm, "the dashboard ConfigMap");
    const dashboard = JSON.parse(cm.data["platform-operator.json"]) as Obj;
    const exprs: string[] = dashboard.panels.flatMap((p: Obj) => p.targets.map((t: Obj) => t.expr));
    assert.ok(exprs.length >= 10);
    const { registry } = await import("../../src/runtime/metrics.js");
    await import("../../src/targets/vault/metrics.js");
    const exported = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
    // Process and Node.js metrics are the default collectors; `up` is Prometheus' own.
    const builtin = /^(up|process_[a-z_]+|nodejs_[a-z_]+)$/;
    for (const expr of exprs) {
      // Grouping labels are not metrics: drop `by (...)` before reading names.
      for (const name of expr.replace(/\bby \([^)]*\)/g, "").match(/\b[a-z_]+(?=\{|\[|\))/g) ?? []) {
        if (["sum", "rate", "by", "or", "vector", "histogram_quantile", "label_values"].includes(name))
          continue;
        const base = name.replace(/_(bucket|sum|count)$/, "");
        if (builtin.test(base) || base.startsWith("openbao_")) continue;
        assert.ok(exported.has(base), `the dashboard queries ${name}, which is not exported`);
      }
    }
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

  it("refuses values the schema does not know, naming them", async () => {
    const msg = await renderFails(["--set=replica=3"]);
    assert.match(msg, /replica/);
    const bad = await renderFails(["--set=targets.vault.namespaces={Team_A}"]);
    assert.match(bad, /namespaces/);
  });
});
