import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import type { ManifestDocument } from "../../src/runtime/target.js";
import { validateGitLabCore, validateGitLabCoreDocuments } from "../../src/targets/gitlab/validate.js";
import { chartVersionsIn, readChart } from "../../src/targets/gitlab/values/chart-files.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));

type Obj = Record<string, unknown>;

const gitlab = (spec: Obj, name = "gitlab", namespace = "gitlab-system"): Obj => ({
  apiVersion: "apps.gitlab.com/v2alpha1",
  kind: "GitLabCore",
  metadata: { name, namespace },
  spec: { version: { type: "Static", version: "10.4.0" }, hostname: "gitlab.example.com", ...spec },
});

const fields = (doc: unknown, options = {}) =>
  validateGitLabCore(doc, options).map((p) => `${p.field}: ${p.message}`);

// A chart schema with the shapes the GitLab chart's has: typed globals, an enum, a required key and
// a closed section. Written here so each test knows exactly what the chart allows.
const SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  required: ["global"],
  properties: {
    global: {
      type: "object",
      properties: {
        edition: { type: "string", enum: ["ee", "ce"] },
        hosts: {
          type: "object",
          properties: { domain: { type: "string", pattern: "^[a-z0-9.-]+$" }, https: { type: "boolean" } },
        },
        time_zone: { type: "string" },
      },
    },
    gitlab: {
      type: "object",
      properties: {
        webservice: {
          type: "object",
          additionalProperties: false,
          properties: { minReplicas: { type: "integer", minimum: 1 } },
        },
      },
    },
    certmanager: { type: "object", required: ["email"], properties: { email: { type: "string" } } },
  },
};

function writeChart(dir: string, version: string, schema: unknown = SCHEMA): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "Chart.yaml"), stringify({ apiVersion: "v2", name: "gitlab", version }));
  writeFileSync(join(dir, "values.yaml"), stringify({ global: { edition: "ee", hosts: { https: true } } }));
  if (schema !== undefined) writeFileSync(join(dir, "values.schema.json"), JSON.stringify(schema));
}

describe("gitlab validate: one object", () => {
  it("the sample and a full valid object pass", () => {
    assert.deepEqual(fields(gitlab({})), []);
    // No spec.version is Latest (issue 44): nothing to say about it.
    const unversioned = gitlab({});
    delete (unversioned["spec"] as Obj)["version"];
    assert.deepEqual(fields(unversioned), []);
    assert.deepEqual(
      fields(
        gitlab({
          edition: "ce",
          postgresql: { host: "pg", passwordSecretRef: { name: "pg", key: "password" } },
          networking: { gateway: { name: "shared" } },
          chart: { values: { anything: { goes: [1, 2] } } },
        }),
      ),
      [],
    );
  });

  it("union rules are the definition's CEL messages, on spec.version", () => {
    assert.deepEqual(fields(gitlab({ version: { type: "Static" } })), [
      "spec.version: type Static takes exactly one of version and versionRef",
    ]);
    assert.deepEqual(fields(gitlab({ version: { type: "Latest", version: "10.4.0" } })), [
      "spec.version: version and versionRef belong to type Static only",
    ]);
    assert.deepEqual(fields(gitlab({ version: { type: "Patch" } })), [
      "spec.version: type Patch needs minor",
    ]);
    // Previous and OldestSupported without a major count across every major (changed on purpose,
    // issue 44: GitLab's unattended upgrades make major optional for them).
    assert.deepEqual(fields(gitlab({ version: { type: "Previous" } })), []);
    assert.deepEqual(fields(gitlab({ version: { type: "Patch", minor: "10.4", major: 10 } })), [
      "spec.version: major belongs to types Latest, Previous and OldestSupported only",
    ]);
    assert.deepEqual(
      fields(gitlab({ networking: { gateway: { name: "g" }, gatewayClass: { name: "c" } } })),
      ["spec.networking: set at most one of envoyGatewayController, gatewayClass and gateway"],
    );
  });

  it("schema errors and unknown fields name the field", () => {
    const out = fields(
      gitlab({
        edition: "premium",
        hostname: "10.0.0.1",
        postgresql: { host: "pg", passwordSecretRef: { name: "pg", key: "password" }, port: 5433 },
        upgrade: { skipBatchedMigrationChecks: true },
      }),
    );
    assert.ok(
      out.some((l) => l.startsWith("spec.edition: must be one of: ce, ee")),
      out.join("\n"),
    );
    assert.ok(out.some((l) => l.startsWith("spec.hostname: ")));
    assert.ok(out.includes("spec.postgresql.port: is not a field of GitLabCore (unknown field)"));
    assert.ok(
      out.includes("spec.upgrade.skipBatchedMigrationChecks: is not a field of GitLabCore (unknown field)"),
    );
  });

  it("another apiVersion is refused; a non-object is a problem, not a crash", () => {
    assert.deepEqual(fields({ ...gitlab({}), apiVersion: "apps.gitlab.com/v1beta1" }), [
      "apiVersion: must be apps.gitlab.com/v2alpha1 (this operator serves no other version)",
    ]);
    for (const hostile of [null, 7, "x", [], { apiVersion: "apps.gitlab.com/v2alpha1", kind: "GitLabCore" }])
      assert.ok(validateGitLabCore(hostile).length > 0);
    assert.ok(fields({ ...gitlab({}), spec: "nope" }).length > 0);
    assert.ok(fields(gitlab({ version: "10.4.0" })).length > 0);
  });

  it("values errors: public-suffix hostname, chart gate, conflicting free-form values", () => {
    assert.deepEqual(fields(gitlab({ hostname: "co.uk" })), [
      "spec.hostname: is a public suffix, under which names belong to others: use a name inside your own domain",
    ]);
    assert.deepEqual(
      fields(
        gitlab({
          version: { type: "Static", version: "10.3.4" },
          networking: { envoyGatewayController: {} },
        }),
      ),
      ["spec.networking.envoyGatewayController: needs chart 10.4.0 or later; the target chart is 10.3.4"],
    );
    assert.deepEqual(fields(gitlab({ chart: { values: { global: { hosts: [] } } } })), [
      "spec.chart.values.global.hosts: must be a map, not a list: the operator derives global.hosts from spec.hostname",
    ]);
  });

  it("a versionRef cannot be resolved offline: values are checked without the chart gate", () => {
    const ref = { type: "Static", versionRef: { kind: "ConfigMap", name: "v", key: "chart" } };
    assert.deepEqual(fields(gitlab({ version: ref, networking: { envoyGatewayController: {} } })), []);
  });
});

describe("gitlab validate: against a chart's values.schema.json", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "gitlab-validate-"));
    writeChart(join(dir, "gitlab", "10.4.0"), "10.4.0");
    writeChart(join(dir, "gitlab", "10.3.4"), "10.3.4", undefined); // no schema: nothing to check
    // A packaged chart, as `helm package` lays it out: one top folder named after the chart.
    const pkg = mkdtempSync(join(tmpdir(), "gitlab-pkg-"));
    writeChart(join(pkg, "gitlab"), "11.0.0");
    execFileSync("tar", ["-czf", join(dir, "gitlab-11.0.0.tgz"), "-C", pkg, "gitlab"]);
    rmSync(pkg, { recursive: true, force: true });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("lists unpacked and packaged charts, and reads both", () => {
    assert.deepEqual(chartVersionsIn(dir).sort(), ["10.3.4", "10.4.0", "11.0.0"]);
    const packed = readChart(dir, "11.0.0");
    assert.ok(packed.ok, JSON.stringify(packed));
    assert.deepEqual(packed.chart.defaults, { global: { edition: "ee", hosts: { https: true } } });
    assert.equal((packed.chart.schema as { type: string }).type, "object");
    const missing = readChart(dir, "12.0.0");
    assert.ok(!missing.ok);
    assert.match(missing.error, /no chart gitlab 12\.0\.0/);
  });

  it("passes values the schema accepts", () => {
    const ok = gitlab({ chart: { values: { certmanager: { email: "ops@example.com" } } } });
    assert.deepEqual(fields(ok, { chartsDir: dir }), []);
  });

  it("names the free-form field a violation comes from, without echoing its value", () => {
    const doc = gitlab({
      chart: {
        values: {
          certmanager: { email: "ops@example.com" },
          gitlab: { webservice: { minReplicas: 0, replicas: "s3cr3t" } },
        },
      },
    });
    const out = validateGitLabCore(doc, { chartsDir: dir });
    const byField = new Map(out.map((p) => [p.field, p.message]));
    assert.match(byField.get("spec.chart.values.gitlab.webservice.minReplicas") ?? "", /must be >= 1/);
    assert.match(
      byField.get("spec.chart.values.gitlab.webservice.replicas") ?? "",
      /is not allowed by the chart \(values\.schema\.json of chart 10\.4\.0\)/,
    );
    assert.ok(!JSON.stringify(out).includes("s3cr3t"));
  });

  it("a missing required key is named where the user would set it; a derived value names its field", () => {
    const out = fields(gitlab({ chart: { values: { certmanager: {} } } }), { chartsDir: dir });
    assert.deepEqual(out, [
      "spec.chart.values.certmanager.email: is required (values.schema.json of chart 10.4.0)",
    ]);
    // edition ce passes the enum; a bad derived value would name spec.edition (the schema allows both).
    const tracked = fields(
      gitlab({ version: { type: "Latest" }, chart: { values: { certmanager: { email: 1 } } } }),
      {
        chartsDir: dir,
      },
    );
    assert.deepEqual(tracked, [
      "spec.chart.values.certmanager.email: must be string (values.schema.json of chart 11.0.0)",
    ]);
  });

  it("a null drops the chart default before the check, as Helm coalesces", () => {
    const out = fields(gitlab({ chart: { values: { global: null, certmanager: { email: "a@b.c" } } } }), {
      chartsDir: dir,
    });
    // The operator overrides put global back (global.gatewayApi.installEnvoy), so global exists.
    assert.deepEqual(out, []);
  });

  it("a version the charts directory lacks, or a tracking type it cannot serve, is named", () => {
    assert.deepEqual(fields(gitlab({ version: { type: "Static", version: "10.9.9" } }), { chartsDir: dir }), [
      `spec.version: no chart gitlab 10.9.9 in ${dir}`,
    ]);
    assert.deepEqual(fields(gitlab({ version: { type: "Patch", minor: "9.11" } }), { chartsDir: dir }), [
      `spec.version.minor: the charts in ${dir} have no release of minor 9.11`,
    ]);
  });

  it("a derived value the schema refuses names the structured field it comes from", () => {
    const strict = mkdtempSync(join(tmpdir(), "gitlab-strict-"));
    try {
      const schema = structuredClone(SCHEMA);
      schema.properties.global.properties.edition.enum = ["ee"];
      schema.properties.global.properties.hosts.properties.domain = {
        type: "string",
        pattern: "^[a-z]+\\.com$",
      } as never;
      writeChart(join(strict, "gitlab", "10.4.0"), "10.4.0", schema);
      assert.deepEqual(
        fields(gitlab({ edition: "ce", hostname: "gitlab.example.org" }), { chartsDir: strict }),
        [
          'spec.edition: global.edition must be one of: "ee" (values.schema.json of chart 10.4.0; derived value global.edition)',
          'spec.hostname: global.hosts.domain must match pattern "^[a-z]+\\.com$" (values.schema.json of chart 10.4.0; derived value global.hosts.domain)',
        ],
      );
    } finally {
      rmSync(strict, { recursive: true, force: true });
    }
  });

  it("a chart without a schema checks nothing more", () => {
    assert.deepEqual(
      fields(gitlab({ version: { type: "Static", version: "10.3.4" } }), { chartsDir: dir }),
      [],
    );
  });

  it("a schema that does not compile is one clear problem", () => {
    const bad = mkdtempSync(join(tmpdir(), "gitlab-badschema-"));
    try {
      writeChart(join(bad, "gitlab", "10.4.0"), "10.4.0", {
        type: "object",
        properties: { a: { type: 12 } },
      });
      const out = fields(gitlab({}), { chartsDir: bad });
      assert.equal(out.length, 1);
      assert.match(
        out[0]!,
        /^spec\.version: values\.schema\.json of chart 10\.4\.0: values\.schema\.json does not compile/,
      );
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });
});

describe("gitlab validate: documents and the CLI", () => {
  const docs = (...objects: Obj[]): ManifestDocument[] =>
    objects.map((doc, i) => ({ file: "m.yaml", document: i + 1, line: i * 10 + 1, doc }));

  it("repeated names and hostnames are named on each object", () => {
    const problems = validateGitLabCoreDocuments(
      docs(gitlab({}), gitlab({ hostname: "code.example.com" }), gitlab({}, "other"), {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "gitlab" },
      }),
    );
    const lines = problems.map((p) => `${p.line} ${p.object} ${p.key}: ${p.message}`);
    assert.deepEqual(lines, [
      "1 gitlab-system/gitlab metadata.name: is also the name of gitlab-system/gitlab (m.yaml:11)",
      "11 gitlab-system/gitlab metadata.name: is also the name of gitlab-system/gitlab (m.yaml:1)",
      "1 gitlab-system/gitlab spec.hostname: is also the hostname of gitlab-system/other (m.yaml:21)",
      "21 gitlab-system/other spec.hostname: is also the hostname of gitlab-system/gitlab (m.yaml:1)",
    ]);
  });

  it("platform-operator validate checks GitLabCore with --charts and exits 1 naming file, object and key", () => {
    const dir = mkdtempSync(join(tmpdir(), "gitlab-cli-"));
    try {
      writeChart(join(dir, "charts", "gitlab", "10.4.0"), "10.4.0");
      const manifest = join(dir, "gitlab.yaml");
      writeFileSync(
        manifest,
        stringify(gitlab({ chart: { values: { gitlab: { webservice: { minReplicas: 0 } } } } })),
      );
      const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
        spawnSync(process.execPath, [join(root, "dist/src/cli/main.js"), "validate", ...args], {
          encoding: "utf8",
          env: { ...process.env, HELM_CHARTS: "", ...env },
        });
      const withCharts = run(["--charts", join(dir, "charts"), manifest]);
      assert.equal(withCharts.status, 1, withCharts.stderr);
      assert.match(
        withCharts.stdout,
        /gitlab\.yaml:1: document 1: gitlab-system\/gitlab: spec\.chart\.values\.gitlab\.webservice\.minReplicas: .*must be >= 1/,
      );
      // The same through HELM_CHARTS, as the operator reads it.
      assert.equal(run([manifest], { HELM_CHARTS: join(dir, "charts") }).status, 1);
      // Without charts, only what needs none is checked: this object passes.
      const without = run([manifest]);
      assert.equal(without.status, 0, without.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
