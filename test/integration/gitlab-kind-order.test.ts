import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GitLabReleaseNameLabel, GitLabReleaseNamespaceLabel } from "../../src/apis/gitlabcore.js";
import { applyAny } from "../../src/runtime/apply.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { silentLogger } from "../../src/runtime/log.js";
import { cleanUpRelease } from "../../src/targets/gitlab/deletion/index.js";
import { compareInventoryItems } from "../../src/targets/gitlab/prune/index.js";
import { HelmRunner, type RenderedObject, splitManifests } from "../../src/targets/gitlab/render/index.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm, HELM_VERSION } from "../../src/testenv/helm.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";

// The test environment's helm is Helm 3 (src/testenv/helm.ts); GitLab's operator orders by the Helm
// 4 SDK. The two agree on every kind but the two webhook configuration kinds, so: real helm decides
// everything they agree on, and the facts table (test/unit/gitlab-kind-order.test.ts) decides where
// the webhook kinds go. Helm 3 puts those among the unlisted kinds; that is asserted too, so a move
// to a Helm 4 binary shows up here as a test to update, not as a silent difference.

const WEBHOOKS = new Set(["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]);
const noWebhooks = (kinds: string[]) => kinds.filter((k) => !WEBHOOKS.has(k));
/** Consecutive duplicates dropped: the kind sequence. */
const runs = (kinds: string[]) => kinds.filter((k, i) => i === 0 || kinds[i - 1] !== k);

// A webhook that can never be called: it matches only objects carrying a label nothing carries,
// and ignores failures. The API server is shared with other suites.
const webhook = (kind: string, name: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}
metadata:
  name: {{ .Release.Name }}-${name}-{{ .Release.Namespace }}
webhooks:
  - name: ${name}.kind-order.test
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Ignore
    objectSelector:
      matchLabels:
        kind-order.test/never: "{{ .Release.Namespace }}"
    rules:
      - apiGroups: ["kind-order.test"]
        apiVersions: ["v1"]
        operations: ["CREATE"]
        resources: ["nothing"]
    clientConfig:
      url: https://127.0.0.1:1/never
`;
const cm = (name: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
data: {}
`;
const svc = (name: string) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  ports: [{ port: 80 }]
  selector: { app: ${name} }
`;
const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 0
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec:
      containers: [{ name: web, image: registry.invalid/web:1 }]
`;
const route = (kind: string, name: string) => `apiVersion: gateway.networking.k8s.io/v1
kind: ${kind}
metadata:
  name: ${name}
spec: {}
`;

/**
 * A chart whose template paths disagree with its object names (a kind's objects go in path order,
 * not by name) and, with `unlisted`, kinds whose byte order is not a locale's (GRPCRoute < Gateway).
 */
function writeChart(dir: string, unlisted: boolean): string {
  const chart = join(dir, unlisted ? "all-kinds" : "served-kinds");
  mkdirSync(join(chart, "templates"), { recursive: true });
  writeFileSync(join(chart, "Chart.yaml"), "apiVersion: v2\nname: kind-order\nversion: 0.1.0\n");
  const files: Record<string, string> = {
    "a-webhooks.yaml": `${webhook("ValidatingWebhookConfiguration", "v")}---\n${webhook("MutatingWebhookConfiguration", "m")}`,
    "b-config.yaml": `${cm("zz-config")}---\n${cm("aa-config")}`,
    "c-service.yaml": svc("zz-svc"),
    "d-service.yaml": svc("aa-svc"),
    "e-web.yaml": deployment,
  };
  if (unlisted) {
    files["f-routes.yaml"] =
      `${route("HTTPRoute", "http")}---\n${route("Gateway", "gw")}---\n${route("GRPCRoute", "grpc")}`;
  }
  for (const [name, text] of Object.entries(files)) writeFileSync(join(chart, "templates", name), text);
  return chart;
}

describe(`gitlab kind order against the real helm (${HELM_VERSION})`, () => {
  let client: KubeClient;
  let ns: string;
  let dir: string;
  let helm: string;
  const kubeconfig = () => sharedEnv().kubeconfigPath;

  before(async () => {
    client = clientFor(kubeconfig());
    ns = await freshNamespace(client, "gl-kind-order");
    helm = await ensureHelm();
    dir = makeTempDir("gitlab-kind-order");
  });
  after(async () => {
    await runCommand(helm, ["uninstall", "ko", "--namespace", ns, "--kubeconfig", kubeconfig()]).catch(
      () => undefined,
    );
    await client?.delete(NAMESPACE, ns).catch(() => undefined);
    client?.close();
    if (dir) removeTempDir(dir);
  });

  it("install: ours is helm's order for every kind but the webhooks, which go where Helm 4 puts them", async () => {
    const runner = new HelmRunner({ binary: helm });
    const { stdout } = await runner.run(["template", "ko", writeChart(dir, true), "--namespace", ns]);
    const printed = splitDocs(stdout);
    const helmKinds = printed.map((o) => o.kind);
    // Helm 3's own order: the webhook kinds among the unlisted ones, by name.
    assert.deepEqual(runs(helmKinds), [
      "ConfigMap",
      "Service",
      "Deployment",
      "GRPCRoute",
      "Gateway",
      "HTTPRoute",
      "MutatingWebhookConfiguration",
      "ValidatingWebhookConfiguration",
    ]);

    const ours = splitManifests(stdout, { releaseName: "ko", namespace: ns }).objects;
    const id = (o: { kind: string; metadata: { name: string } }) => `${o.kind}/${o.metadata.name}`;
    const notWebhook = (o: { kind: string }) => !WEBHOOKS.has(o.kind);
    // Object for object (a kind's objects as helm printed them: template path, then in the file).
    assert.deepEqual(ours.filter(notWebhook).map(id), printed.filter(notWebhook).map(id));
    assert.deepEqual(
      ours.filter((o) => o.kind === "Service" || o.kind === "ConfigMap").map((o) => o.metadata.name),
      ["zz-config", "aa-config", "zz-svc", "aa-svc"],
    );
    // The facts table's Helm 4 place: after the last listed kind, mutating before validating.
    assert.deepEqual(runs(ours.map((o) => o.kind)), [
      "ConfigMap",
      "Service",
      "Deployment",
      "MutatingWebhookConfiguration",
      "ValidatingWebhookConfiguration",
      "GRPCRoute",
      "Gateway",
      "HTTPRoute",
    ]);
    // The kind sort does not lean on helm's printed order: the documents reversed sort the same.
    const reversed = stdout.split(/^---$/m).reverse().join("\n---\n");
    const again = splitManifests(reversed, { releaseName: "ko", namespace: ns }).objects.map((o) => o.kind);
    assert.deepEqual(runs(again), runs(ours.map((o) => o.kind)));
  });

  it("uninstall: helm deletes kind by kind in the order ours sorts to, webhooks aside (Helm 4: first)", async () => {
    const chart = writeChart(dir, false);
    await runCommand(helm, ["install", "ko", chart, "--namespace", ns, "--kubeconfig", kubeconfig()]);
    const { stdout: manifest } = await runCommand(helm, [
      "get",
      "manifest",
      "ko",
      "--namespace",
      ns,
      "--kubeconfig",
      kubeconfig(),
    ]);
    const installed = splitDocs(manifest);
    const out = await runCommand(helm, [
      "uninstall",
      "ko",
      "--namespace",
      ns,
      "--kubeconfig",
      kubeconfig(),
      "--debug",
    ]);
    // Helm logs each delete it starts; one kind's deletes run together, kinds one after another.
    const deleted = [...`${out.stdout}\n${out.stderr}`.matchAll(/Starting delete for "[^"]+" (\w+)/g)].map(
      (m) => m[1]!,
    );
    assert.equal(deleted.length, installed.length, "helm logged a delete per object");
    const helmRuns = runs(deleted);
    assert.deepEqual(helmRuns, [
      "Service",
      "Deployment",
      "ConfigMap",
      "MutatingWebhookConfiguration",
      "ValidatingWebhookConfiguration",
    ]);

    const items = installed.map((o) => ({
      type: {
        group: o.apiVersion.includes("/") ? o.apiVersion.split("/")[0]! : "",
        version: "v1",
        kind: o.kind,
        plural: "",
        namespaced: o.kind !== "MutatingWebhookConfiguration" && o.kind !== "ValidatingWebhookConfiguration",
      },
      metadata: { name: o.metadata.name, namespace: ns },
    }));
    const ours = runs(items.sort((a, b) => compareInventoryItems(a, b, "uninstall")).map((i) => i.type.kind));
    assert.deepEqual(noWebhooks(ours), noWebhooks(helmRuns));
    assert.deepEqual(ours.slice(0, 2), ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]);
  });

  it("deleting a GitLabCore removes its cluster-scoped objects in Helm 4's uninstall order", async () => {
    const release = { name: "ko2", namespace: ns };
    const labels = { [GitLabReleaseNameLabel]: release.name, [GitLabReleaseNamespaceLabel]: ns };
    const objects: RenderedObject[] = [
      {
        apiVersion: "scheduling.k8s.io/v1",
        kind: "PriorityClass",
        metadata: { name: `ko2-${ns}`, labels },
        value: 1000,
      } as RenderedObject,
    ];
    // The chart's webhook documents, rendered by helm for this release.
    const runner = new HelmRunner({ binary: helm });
    const { stdout } = await runner.run(["template", "ko2", writeChart(dir, false), "--namespace", ns]);
    for (const o of splitDocs(stdout).filter((o) => WEBHOOKS.has(o.kind)))
      objects.push({ ...o, metadata: { ...o.metadata, labels } });
    for (const o of objects) await applyAny(client, o, { fieldManager: "gitlab-kind-order-test" });
    // As status.renderedKinds records them: sorted by name, the mutating kind first.
    const recorded = objects.map((o) => `${o.apiVersion}/${o.kind}`).sort();
    const report = await cleanUpRelease(client, release, recorded, silentLogger());
    assert.deepEqual(report.failed, []);
    assert.deepEqual(
      report.deleted.map((d) => d.split(" ")[0]),
      ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "PriorityClass"],
    );
  });
});

/** helm's output as objects, in the order printed. */
function splitDocs(text: string): RenderedObject[] {
  // splitManifests re-sorts; this keeps helm's order (the documents are plain, no lists).
  const docs = text
    .split(/^---$/m)
    .map((d) => d.trim())
    .filter((d) => d !== "" && /^kind:/m.test(d));
  return docs.map((d) => {
    const one = splitManifests(`---\n${d}\n`, { releaseName: "x", namespace: "x" }).objects[0]!;
    return one;
  });
}
