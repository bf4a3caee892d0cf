import assert from "node:assert/strict";
import { accessSync, constants, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { describe, it } from "node:test";
import { stringify } from "yaml";
import { runCommand } from "../../src/testenv/exec.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { type Obj, parseStrict, renderText } from "../support/chart-render.js";

// The chart under post-rendering, as Flux's helm-controller does it: every rendered document goes
// through kustomize, which refuses a map holding a key twice (upstream's chart broke so under Flux)
// and two objects with one identity, then gains Flux's origin labels. Across a matrix of values, each
// document is parsed with a parser that refuses duplicate keys, the label patch is applied the way
// the post-renderer applies it, and the result is checked; where a kustomize is on PATH (kubectl's
// or its own), the real one renders the same stream.

const MATRIX: Record<string, string[]> = {
  defaults: [],
  "every target, CRDs": [
    "--include-crds",
    "--set=targets.openbao.enabled=true",
    "--set=targets.gitlab.enabled=true",
    "--set=targets.vault.namespaces={team-a,team-b}",
    "--set=targets.openbao.namespaces={bao}",
  ],
  "one process, multi-tenant, policies, webhook by cert-manager": [
    "--set=targets.openbao.enabled=true",
    "--set=targets.gitlab.enabled=true",
    "--set=deployments.all={vault,openbao,gitlab}",
    "--set=tenancy.mode=multi",
    "--set=admissionPolicies.enabled=true",
    "--set=webhook.enabled=true",
    "--set=webhook.certManager.enabled=true",
  ],
  "monitoring with labels, network policy, user labels and env": [
    "--api-versions=monitoring.coreos.com/v1/PodMonitor",
    "--api-versions=monitoring.coreos.com/v1/PrometheusRule",
    "--set=monitoring.labels.release=prometheus",
    "--set=networkPolicy.enabled=true",
    "--set=networkPolicy.apiServer.cidrs={10.0.0.1/32}",
    "--set=networkPolicy.metricsAllowedNamespaceLabels.metrics=enabled",
    "--set=podLabels.team=platform",
    "--set=podAnnotations.team=platform",
    "--set=serviceAccount.annotations.team=platform",
    '--set-json=extraEnv=[{"name":"A","value":"1"}]',
  ],
  "upstream's names: controller.*, monitors, metrics RBAC, fullname, external labels": [
    "--set=targets.openbao.enabled=true",
    "--set=fullnameOverride=bao-op",
    "--set=platform=openshift",
    "--set=controller.podLabels.team=platform",
    "--set=podLabels.tier=ops",
    "--set=controller.podAnnotations.team=platform",
    "--set=controller.serviceAccount.annotations.team=platform",
    "--set=healthProbes.port=9091",
    "--set=metrics.serviceMonitor.enabled=true",
    "--set=metrics.serviceMonitor.labels.release=prometheus",
    "--set=metrics.victoriaMetrics.enabled=true",
    "--set=metrics.rbac.enabled=true",
    '--set-json=metrics.rbac.subjects=[{"name":"prometheus","namespace":"monitoring"}]',
    "--set=tenancy.mode=multi",
    "--set=tenancy.namespacePodSecurityLabels.mode=external",
    "--set=admissionPolicies.enabled=true",
    "--set=networkPolicy.enabled=true",
  ],
  "one replica, no leader election, no metrics, no Gateway API, digest": [
    "--set=targets.gitlab.enabled=true",
    "--set=replicas=1",
    "--set=leaderElection.enabled=false",
    "--set=metrics.enabled=false",
    "--set=gatewayAPI.enabled=false",
    `--set=image.digest=sha256:${"0".repeat(64)}`,
  ],
};

// What helm-controller's post-renderer adds to every object it applies.
const FLUX_LABELS = {
  "helm.toolkit.fluxcd.io/name": "po",
  "helm.toolkit.fluxcd.io/namespace": "flux-system",
};

/** Flux's origin labels on each object's metadata.labels, as its kustomize label transformer does. */
function withFluxLabels(objs: Obj[]): Obj[] {
  return objs.map((o) => ({
    ...o,
    metadata: { ...o.metadata, labels: { ...(o.metadata?.labels ?? {}), ...FLUX_LABELS } },
  }));
}

/** group/kind/namespace/name: kustomize refuses a stream holding one identity twice. */
const identity = (o: Obj) =>
  `${String(o.apiVersion).includes("/") ? String(o.apiVersion).split("/")[0] : ""}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;

function kustomizeCommand(): string[] | undefined {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    for (const [bin, args] of [
      ["kustomize", ["build"]],
      ["kubectl", ["kustomize"]],
    ] as const) {
      try {
        accessSync(join(dir, bin), constants.X_OK);
        return [join(dir, bin), ...args];
      } catch {}
    }
  }
  return undefined;
}

describe("the chart under Flux-style post-rendering", () => {
  it("the strict parse refuses a key twice in one map (the check below can fail)", () => {
    assert.throws(
      () => parseStrict("metadata:\n  labels:\n    a: '1'\n    a: '2'\n"),
      /does not parse cleanly/,
    );
  });

  for (const [name, args] of Object.entries(MATRIX)) {
    it(`${name}: every document parses with unique keys, every identity once, and takes Flux's labels`, async () => {
      const objs = parseStrict(await renderText(args), name);
      assert.ok(objs.length > 5);
      const ids = objs.map(identity);
      assert.deepEqual(
        ids.filter((id, i) => ids.indexOf(id) !== i),
        [],
        "no object rendered twice",
      );
      for (const o of objs) assert.ok(o.apiVersion && o.kind && o.metadata?.name, identity(o));
      // The post-rendered stream, written out and read back as strictly: the labels merge into the
      // chart's (one key once), and the chart's own labels are still there.
      const patched = parseStrict(
        withFluxLabels(objs)
          .map((o) => stringify(o))
          .join("---\n"),
        `${name}, post-rendered`,
      );
      assert.equal(patched.length, objs.length);
      for (const [i, o] of patched.entries()) {
        for (const [k, v] of Object.entries(FLUX_LABELS)) assert.equal(o.metadata.labels[k], v);
        for (const [k, v] of Object.entries(objs[i]!.metadata.labels ?? {}))
          assert.equal(o.metadata.labels[k], v, `${identity(o)}: ${k} kept`);
      }
    });
  }

  it("real kustomize builds every matrix entry with Flux's labels (kubectl kustomize or kustomize on PATH)", async (t) => {
    const kustomize = kustomizeCommand();
    if (!kustomize) {
      t.skip("neither kustomize nor kubectl is on PATH; the strict parse above stands in for it");
      return;
    }
    for (const [name, args] of Object.entries(MATRIX)) {
      const dir = makeTempDir("chart-kustomize");
      const rendered = await renderText(args);
      writeFileSync(join(dir, "all.yaml"), rendered);
      writeFileSync(
        join(dir, "kustomization.yaml"),
        stringify({ resources: ["all.yaml"], labels: [{ pairs: FLUX_LABELS }] }),
      );
      const { stdout } = await runCommand(kustomize[0]!, [...kustomize.slice(1), dir]);
      const built = parseStrict(stdout, `${name}, kustomize`);
      assert.equal(built.length, parseStrict(rendered).length, name);
      for (const o of built)
        for (const [k, v] of Object.entries(FLUX_LABELS))
          assert.equal(o.metadata.labels[k], v, `${name}: ${identity(o)}`);
    }
  });
});
