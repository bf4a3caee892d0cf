import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { stringify } from "yaml";
import { type AdmissionRequest, parseReview, ratchet, reviewResponse } from "../../src/runtime/admission.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { gitLabCoreVerdict } from "../../src/targets/gitlab/admission.js";
import { openBaoVerdict } from "../../src/targets/openbao/admission.js";
import { vaultSeedVerdict } from "../../src/targets/vault/admission.js";
import { parseApplications } from "../../src/targets/vault/config.js";

type Obj = Record<string, unknown>;
const seed = (name: string, spec: Obj): KubeObject => ({
  apiVersion: "ohmlab.fr/v1alpha1",
  kind: "VaultSeed",
  metadata: { name, namespace: "ns" },
  spec,
});

function request(
  kind: { group: string; kind: string },
  object: unknown,
  extra: Partial<AdmissionRequest> = {},
) {
  const meta = (object as { metadata?: { name?: string; namespace?: string } }).metadata;
  return {
    uid: "u1",
    kind: { ...kind, version: "v1alpha1" },
    operation: "CREATE",
    name: meta?.name,
    namespace: meta?.namespace,
    object,
    ...extra,
  } as AdmissionRequest;
}
const VS = { group: "ohmlab.fr", kind: "VaultSeed" };
const fieldsOf = (v: { errors: { field?: string; message: string }[] }) =>
  v.errors.map((e) => `${e.field ?? ""}: ${e.message}`);

describe("admission: VaultSeed", () => {
  it("a valid seed is admitted; validate's problems refuse, naming the field", () => {
    assert.deepEqual(
      vaultSeedVerdict(request(VS, seed("a", { path: "k/a", data: { x: "<random:8>" } })), () => []),
      {
        errors: [],
        warnings: [],
      },
    );
    const bad = vaultSeedVerdict(
      request(
        VS,
        seed("a", { path: "k/a", bogus: 1, data: { x: "<bcrypt:y>" }, rotate: { keys: "a", token: "t" } }),
      ),
      () => [],
    );
    const lines = fieldsOf(bad);
    assert.ok(lines.includes("spec.bogus: unknown field: the schema does not declare it"), lines.join("\n"));
    assert.ok(lines.includes("spec.data.x: bcrypt target y is not declared in data"), lines.join("\n"));
    assert.ok(
      lines.some((l) => l.includes("spec.rotate.keys must be a list")),
      lines.join("\n"),
    );
    assert.equal(lines.filter((l) => l.includes("rotate.keys")).length, 1, "one problem per field");
  });

  it("path is immutable on update", () => {
    const v = vaultSeedVerdict(
      request(VS, seed("a", { path: "k/b", data: { x: "1" } }), {
        operation: "UPDATE",
        oldObject: seed("a", { path: "k/a", data: { x: "1" } }),
      }),
      () => [],
    );
    assert.deepEqual(fieldsOf(v), [
      "spec.path: is immutable (was k/a): delete this VaultSeed and create another for the new path",
    ]);
  });

  it("a path another cached object seeds, and a cycle through the new object, are refused", () => {
    const cache = [
      seed("other", { path: "k/a", data: { y: "1" } }),
      seed("b", { path: "k/b", data: { r: "<ref:k/c#x>" } }),
    ];
    const twin = vaultSeedVerdict(request(VS, seed("a", { path: "k/a", data: { x: "1" } })), () => cache);
    assert.deepEqual(fieldsOf(twin), [": path k/a is also seeded by ns/other (in the cluster)"]);
    const cycle = vaultSeedVerdict(
      request(VS, seed("c", { path: "k/c", data: { x: "<ref:k/b#r>" } })),
      () => cache,
    );
    assert.deepEqual(fieldsOf(cycle), ["x: reference cycle between paths k/b, k/c"]);
    // The stored version of the object itself is not "another object".
    const self = vaultSeedVerdict(
      request(VS, seed("other", { path: "k/a", data: { y: "2" } }), {
        operation: "UPDATE",
        oldObject: cache[0],
      }),
      () => cache,
    );
    assert.deepEqual(self.errors, []);
  });

  it("an application namespace's prefixes refuse with the controller's words; refused objects claim no path", () => {
    const scopes = parseApplications({ apps: { write: ["apps/team"], read: ["shared"] } }, "applications");
    const inApps = (name: string, spec: Obj): KubeObject => ({
      ...seed(name, spec),
      metadata: { name, namespace: "apps" },
    });
    const outside = vaultSeedVerdict(
      request(VS, inApps("a", { path: "k/a", data: { x: "1" } })),
      () => [],
      scopes,
    );
    assert.deepEqual(fieldsOf(outside), [
      "spec.path: namespace apps is an application namespace and may seed only under apps/team/: spec.path k/a lies outside its prefixes; nothing was written",
    ]);
    const reads = vaultSeedVerdict(
      request(VS, inApps("b", { path: "apps/team/b", data: { x: "<ref:k/c#x>" } })),
      () => [],
      scopes,
    );
    assert.match(
      fieldsOf(reads).join("\n"),
      /^spec.data.x: namespace apps is an application namespace and its references may read only under apps\/team\/, shared\/; k\/c is outside them/,
    );
    // Inside its prefix it is admitted; an object the allow-list refuses holds no path against it.
    const squatter = inApps("squat", { path: "k/other", data: { y: "1" } });
    const fine = vaultSeedVerdict(
      request(VS, seed("c", { path: "k/other", data: { x: "1" } })),
      () => [squatter],
      scopes,
    );
    assert.deepEqual(fine.errors, []);
    // Without scopes the same object would hold the path.
    assert.equal(
      vaultSeedVerdict(request(VS, seed("c", { path: "k/other", data: { x: "1" } })), () => [squatter]).errors
        .length,
      1,
    );
  });

  it("a write past OpenBao's default string limit is a warning, not a refusal", () => {
    const data: Obj = {};
    for (let i = 0; i < 600; i++) data[`k${i}`] = "<random:8>";
    const v = vaultSeedVerdict(request(VS, seed("a", { path: "k/a", data })), () => []);
    assert.deepEqual(v.errors, []);
    assert.match(v.warnings[0]!, /^spec\.data: one write of this path carries 1203 strings/);
  });
});

describe("admission: OpenBaoCluster", () => {
  it("a seal block of another seal type is refused with its field", () => {
    const cluster = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "c", namespace: "ns" },
      spec: {
        version: "2.4.1",
        storage: { size: "10Gi" },
        unseal: { type: "transit", awskms: { region: "eu-west-1", kmsKeyID: "alias/bao" } },
      },
    };
    const lines = fieldsOf(
      openBaoVerdict(request({ group: "openbao.org", kind: "OpenBaoCluster" }, cluster)),
    );
    assert.ok(
      lines.some((l) => l.startsWith("spec.unseal.awskms: belongs to unseal.type awskms")),
      lines.join("\n"),
    );
    assert.ok(
      lines.some((l) => l.startsWith("spec.unseal.transit: is required")),
      lines.join("\n"),
    );
  });
});

describe("admission: GitLabCore", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "admission-charts-"));
    const chart = join(dir, "gitlab", "10.4.0");
    mkdirSync(chart, { recursive: true });
    writeFileSync(
      join(chart, "Chart.yaml"),
      stringify({ apiVersion: "v2", name: "gitlab", version: "10.4.0" }),
    );
    writeFileSync(join(chart, "values.yaml"), stringify({ global: { edition: "ee" } }));
    writeFileSync(
      join(chart, "values.schema.json"),
      JSON.stringify({
        type: "object",
        properties: {
          certmanager: { type: "object", required: ["email"], properties: { email: { type: "string" } } },
        },
      }),
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const GL = { group: "apps.gitlab.com", kind: "GitLabCore" };
  const gitlab = (spec: Obj, status?: Obj) => ({
    apiVersion: "apps.gitlab.com/v2alpha1",
    kind: "GitLabCore",
    metadata: { name: "g", namespace: "ns" },
    spec: { version: { type: "Static", version: "10.4.0" }, hostname: "gitlab.example.com", ...spec },
    ...(status ? { status } : {}),
  });

  it("values the chart's schema refuses are refused, naming the field", () => {
    const v = gitLabCoreVerdict(request(GL, gitlab({ chart: { values: { certmanager: {} } } })), {
      chartsDir: dir,
    });
    assert.deepEqual(fieldsOf(v), [
      "spec.chart.values.certmanager.email: is required (values.schema.json of chart 10.4.0)",
    ]);
  });

  it("a chart not in the charts directory is admitted with a warning", () => {
    const v = gitLabCoreVerdict(request(GL, gitlab({ version: { type: "Static", version: "10.5.0" } })), {
      chartsDir: dir,
    });
    assert.deepEqual(v.errors, []);
    assert.match(
      v.warnings.join("\n"),
      /spec\.version: no chart gitlab 10\.5\.0 .*not checked against its schema/,
    );
  });

  it("a version below the deployed status.version is a refused downgrade", () => {
    const old = gitlab({}, { version: "10.5.0" });
    const v = gitLabCoreVerdict(request(GL, gitlab({}), { operation: "UPDATE", oldObject: old }), {
      chartsDir: dir,
    });
    assert.deepEqual(fieldsOf(v), [
      "spec.version.version: 10.4.0 is below the deployed chart version 10.5.0; downgrades are refused",
    ]);
  });

  it("versionRef and version together are refused (the union's rules)", () => {
    const both = {
      type: "Static",
      version: "10.4.0",
      versionRef: { kind: "ConfigMap", name: "v", key: "k" },
    };
    const v = gitLabCoreVerdict(request(GL, gitlab({ version: both })), { chartsDir: dir });
    assert.ok(
      v.errors.some((e) => e.field === "spec.version"),
      JSON.stringify(v.errors),
    );
  });
});

describe("admission: the AdmissionReview", () => {
  const req = parseReview({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "x",
      kind: { group: "ohmlab.fr", version: "v1alpha1", kind: "VaultSeed" },
      operation: "CREATE",
      name: "a",
      namespace: "ns",
      object: {},
    },
  });

  it("refuses with 422 naming object and fields; observe-only admits with the refusals as warnings", () => {
    assert.ok(typeof req !== "string");
    const verdict = { errors: [{ field: "spec.path", message: "is required" }], warnings: ["w"] };
    const refused = reviewResponse(req, verdict).response as Obj;
    assert.equal(refused["allowed"], false);
    assert.deepEqual(refused["status"], {
      code: 422,
      reason: "Invalid",
      message: "VaultSeed ns/a is invalid: spec.path: is required",
    });
    assert.deepEqual(refused["warnings"], ["VaultSeed ns/a: w"]);
    const observed = reviewResponse(req, verdict, { observeOnly: true }).response as Obj;
    assert.equal(observed["allowed"], true);
    assert.equal(observed["status"], undefined);
    assert.deepEqual(observed["warnings"], [
      "VaultSeed ns/a: w",
      "VaultSeed ns/a: would be refused (observe-only): spec.path: is required",
    ]);
  });

  it("ratchets updates: a deleting object and an unchanged spec are admitted with warnings; a changed spec or bad metadata is not", () => {
    assert.ok(typeof req !== "string");
    const bad = { errors: [{ field: "spec.path", message: "is required" }], warnings: [] };
    const stored = { metadata: { name: "a" }, spec: { data: { x: "1" }, list: [1, 2] } };
    const update = (object: unknown, oldObject: unknown): AdmissionRequest => ({
      ...req,
      operation: "UPDATE",
      object,
      oldObject,
    });
    // A finalizer added by a controller: spec as stored (keys in another order).
    const labelled = { metadata: { name: "a", finalizers: ["f"] }, spec: { list: [1, 2], data: { x: "1" } } };
    const kept = ratchet(update(labelled, stored), bad);
    assert.deepEqual(kept.errors, []);
    assert.deepEqual(kept.warnings, ["spec.path: is required (admitted: spec is unchanged)"]);
    // The spec changed: judged in full.
    const changed = { ...labelled, spec: { data: { x: "2" }, list: [1, 2] } };
    assert.deepEqual(ratchet(update(changed, stored), bad), bad);
    const reordered = { ...labelled, spec: { data: { x: "1" }, list: [2, 1] } };
    assert.deepEqual(ratchet(update(reordered, stored), bad), bad, "list order is content");
    // Being deleted: even a changed spec (a finalizer's removal must never be refused).
    const deleting = { metadata: { name: "a", deletionTimestamp: "2026-01-01T00:00:00Z" }, spec: {} };
    assert.deepEqual(ratchet(update(deleting, { ...stored, metadata: deleting.metadata }), bad).errors, []);
    // Metadata is judged as sent, spec unchanged or not.
    const meta = { errors: [{ field: "metadata.name", message: "too long" }], warnings: [] };
    assert.deepEqual(ratchet(update(labelled, stored), meta), meta);
    // A create is never ratcheted.
    assert.deepEqual(ratchet({ ...req, operation: "CREATE", object: stored }, bad), bad);
  });

  it("a body that is not an AdmissionReview v1 is named", () => {
    assert.equal(
      parseReview({ kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1beta1" }),
      "expected an AdmissionReview of admission.k8s.io/v1",
    );
    assert.match(
      String(parseReview({ kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1" })),
      /no request/,
    );
  });
});
