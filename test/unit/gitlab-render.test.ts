import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GitLabReleaseNameLabel, GitLabReleaseNamespaceLabel } from "../../src/apis/gitlabcore.js";
import {
  ChartSourceConfigError,
  chartSourceConfigFromEnv,
  compareVersions,
  parseDuration,
  parseIndex,
  sortVersions,
} from "../../src/targets/gitlab/charts/index.js";
import {
  type Capabilities,
  RenderCache,
  RenderError,
  type RenderResult,
  redactValues,
  renderKey,
  schemaField,
  schemaFields,
  splitManifests,
} from "../../src/targets/gitlab/render/index.js";

const opts = { releaseName: "gl", namespace: "team-a" };

const doc = (source: string, body: string) => `---\n# Source: gitlab/templates/${source}\n${body}\n`;

describe("splitManifests", () => {
  const output = [
    doc(
      "web.yaml",
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gl-webservice\nspec:\n  replicas: 1",
    ),
    doc("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gl-cm\n  namespace: elsewhere"),
    doc("empty.yaml", ""),
    "---\n# Source: gitlab/templates/only-comment.yaml\n# nothing rendered\n",
    doc("gc.yaml", "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: gl-gc"),
    doc(
      "ss.yaml",
      [
        "apiVersion: batch/v1",
        "kind: Job",
        "metadata:",
        "  name: gl-shared-secrets",
        "  annotations:",
        "    helm.sh/hook: pre-install, pre-upgrade",
        '    helm.sh/hook-weight: "-5"',
        "    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded",
      ].join("\n"),
    ),
    doc(
      "sa.yaml",
      [
        "apiVersion: v1",
        "kind: ServiceAccount",
        "metadata:",
        "  name: gl-ss",
        "  annotations:",
        "    helm.sh/hook: pre-install",
        '    helm.sh/hook-weight: "-10"',
      ].join("\n"),
    ),
    doc(
      "cm-hook.yaml",
      [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: gl-ss",
        "  annotations:",
        "    helm.sh/hook: pre-install",
        '    helm.sh/hook-weight: "-10"',
      ].join("\n"),
    ),
    doc(
      "bad-weight.yaml",
      [
        "apiVersion: batch/v1",
        "kind: Job",
        "metadata:",
        "  name: gl-check",
        "  annotations:",
        "    helm.sh/hook: pre-upgrade",
        "    helm.sh/hook-weight: heavy",
      ].join("\n"),
    ),
    doc(
      "list.yaml",
      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: gl-a\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: gl-b",
    ),
    doc(
      "crd.yaml",
      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x.y.z",
    ),
  ].join("");

  const result = splitManifests(output, { ...opts, clusterScoped: [] });

  it("drops empty documents and keeps every object, in install order", () => {
    assert.deepEqual(
      result.objects.map((o) => `${o.kind}/${o.metadata.name}`),
      [
        "ConfigMap/gl-cm",
        "CustomResourceDefinition/x.y.z",
        "Service/gl-a",
        "Service/gl-b",
        "Deployment/gl-webservice",
        "GatewayClass/gl-gc",
      ],
    );
  });

  it("puts namespaced objects without a namespace in the release's, leaves explicit ones and cluster-scoped ones", () => {
    const byName = new Map(result.objects.map((o) => [o.metadata.name, o]));
    assert.equal(byName.get("gl-webservice")!.metadata.namespace, "team-a");
    assert.equal(byName.get("gl-cm")!.metadata.namespace, "elsewhere");
    assert.equal(byName.get("gl-gc")!.metadata.namespace, undefined);
    assert.equal(byName.get("x.y.z")!.metadata.namespace, undefined);
  });

  it("uses discovery's scope for kinds it knows", () => {
    const r = splitManifests(
      doc("w.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w"),
      {
        ...opts,
        clusterScoped: ["example.com/v1/Widget"],
      },
    );
    assert.equal(r.objects[0]!.metadata.namespace, undefined);
  });

  it("stamps the release labels on objects and hooks", () => {
    for (const o of [...result.objects, ...result.hooks.map((h) => h.object)]) {
      assert.equal(o.metadata.labels?.[GitLabReleaseNameLabel], "gl");
      assert.equal(o.metadata.labels?.[GitLabReleaseNamespaceLabel], "team-a");
    }
  });

  it("classifies hooks: events, weights, delete policies (helm's default when none), sorted as helm runs them", () => {
    assert.deepEqual(
      result.hooks.map((h) => [h.object.kind, h.object.metadata.name, h.events, h.weight, h.deletePolicies]),
      [
        ["ServiceAccount", "gl-ss", ["pre-install"], -10, ["before-hook-creation"]],
        ["ConfigMap", "gl-ss", ["pre-install"], -10, ["before-hook-creation"]],
        [
          "Job",
          "gl-shared-secrets",
          ["pre-install", "pre-upgrade"],
          -5,
          ["before-hook-creation", "hook-succeeded"],
        ],
        ["Job", "gl-check", ["pre-upgrade"], 0, ["before-hook-creation"]],
      ],
    );
    assert.ok(!result.objects.some((o) => o.metadata.annotations?.["helm.sh/hook"]));
  });

  it("refuses an object rendered twice, naming the template", () => {
    const twice = doc("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c").repeat(2);
    assert.throws(() => splitManifests(twice, opts), /templates\/a\.yaml: ConfigMap c is rendered twice/);
  });

  it("names the template of a malformed document without echoing its content", () => {
    const secret = "hunter2-very-secret";
    for (const [body, problem] of [
      [`kind: Secret\nmetadata:\n  name: s\ndata:\n  p: ${secret}`, /apiVersion is missing/],
      [`apiVersion: v1\nkind: Secret\nmetadata:\n  labels:\n    x: ${secret}`, /Secret has no metadata.name/],
      [`- ${secret}`, /not a Kubernetes object/],
      [`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: ${secret}`, /not valid YAML/],
      [
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    n: {x: ${secret}}`,
        /annotations\.n must be a string/,
      ],
    ] as const) {
      assert.throws(
        () => splitManifests(doc("bad.yaml", body), opts),
        (e: unknown) => {
          assert.ok(e instanceof RenderError);
          assert.match(e.message, /templates\/bad\.yaml/);
          assert.match(e.message, problem);
          assert.ok(!e.message.includes(secret), e.message);
          return true;
        },
      );
    }
  });

  it("bounds YAML aliases (a rendered billion-laughs document fails instead of exhausting memory)", () => {
    const lines = [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata: {name: c}",
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
    ];
    for (let i = 0; i < 9; i++) {
      const prev = i === 0 ? "a" : `b${i - 1}`;
      lines.push(
        `b${i}: &b${i} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`,
      );
    }
    assert.throws(() => splitManifests(doc("bomb.yaml", lines.join("\n")), opts), RenderError);
  });

  it("reads an empty render as nothing", () => {
    assert.deepEqual(splitManifests("", opts), { objects: [], hooks: [] });
    assert.deepEqual(splitManifests("---\n---\n", opts), { objects: [], hooks: [] });
  });
});

describe("redactValues", () => {
  it("masks every value of four characters or more wherever it is, longest first, and keeps the rest of the message", () => {
    const values = { global: { psql: { password: "s3cr3t-pass" }, x: ["abc", "s3cr3t"], port: 54321 } };
    const msg = "bad value s3cr3t-pass and s3cr3t at 54321 (abc)";
    assert.equal(redactValues(msg, values), "bad value [redacted] and [redacted] at [redacted] ([redacted])");
  });
  it("withholds a short value where it stands alone, without garbling words that contain it", () => {
    const values = { global: { pin: "a1", initialRootPassword: { secret: "xyz" } }, replicas: 3 };
    const msg = "at '/global/pin': \"a1\" does not match; got xyz, want xyz1 (line 3, a1b)";
    assert.equal(
      redactValues(msg, values),
      "at '/global/pin': \"[redacted]\" does not match; got [redacted], want xyz1 (line 3, a1b)",
    );
  });
  it("copes with hostile values (huge, deep, cyclic through arrays)", () => {
    const deep: Record<string, unknown> = {};
    let cur = deep;
    for (let i = 0; i < 10_000; i++) {
      const next: Record<string, unknown> = {};
      cur["n"] = next;
      cur = next;
    }
    cur["v"] = "needle-value";
    assert.equal(redactValues("a needle-value b", deep), "a [redacted] b");
  });
});

describe("schemaField", () => {
  it("reads the field from helm's jsonschema v6 message and the older format", () => {
    const v6 =
      "values don't meet the specifications of the schema(s) in the following chart(s):\ngitlab:\n- at '/global/hosts/domain': got number, want string";
    assert.equal(schemaField(v6), "global.hosts.domain");
    const old =
      "values don't meet the specifications of the schema(s) in the following chart(s):\ngitlab:\n- global.edition: global.edition must be one of the following";
    assert.equal(schemaField(old), "global.edition");
    assert.equal(schemaField("template: gitlab/templates/x.yaml:3: fail"), undefined);
    const two =
      "values don't meet the specifications of the schema(s) in the following chart(s):\ngitlab:\n- at '/global/edition': value must be one of 'ce', 'ee'\n- at '/global/hosts/domain': 'x' does not match pattern\n- at '': missing property 'global'";
    assert.deepEqual(schemaFields(two), ["global.edition", "global.hosts.domain", "(root)"]);
  });
});

describe("render cache", () => {
  const caps: Capabilities = { kubeVersion: "v1.37.2", apiVersions: ["v1", "apps/v1"] };
  const base = {
    chartDigest: "d1",
    releaseName: "gl",
    namespace: "ns",
    values: { a: 1, b: { c: 2 } },
    capabilities: caps,
  };

  it("keys on chart digest, release, namespace, values and capabilities, not on key or list order", () => {
    const k = renderKey(base);
    assert.equal(renderKey({ ...base, values: { b: { c: 2 }, a: 1 } }), k);
    assert.equal(renderKey({ ...base, capabilities: { ...caps, apiVersions: ["apps/v1", "v1"] } }), k);
    for (const changed of [
      { ...base, chartDigest: "d2" },
      { ...base, releaseName: "gl2" },
      { ...base, namespace: "ns2" },
      { ...base, values: { a: 1, b: { c: 3 } } },
      { ...base, capabilities: { ...caps, kubeVersion: "v1.36.0" } },
      { ...base, capabilities: { ...caps, apiVersions: ["v1"] } },
    ]) {
      assert.notEqual(renderKey(changed), k);
    }
    assert.match(k, /^[0-9a-f]{64}$/);
  });

  it("is bounded (least recently used goes first) and hands out copies", () => {
    const cache = new RenderCache(2);
    const result = (name: string): RenderResult => ({
      objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name } }],
      hooks: [],
      chart: { name: "gitlab", version: "1.0.0", digest: "d" },
    });
    cache.set("a", result("a"));
    cache.set("b", result("b"));
    assert.ok(cache.get("a")); // a is now the most recent
    cache.set("c", result("c"));
    assert.equal(cache.size, 2);
    assert.equal(cache.get("b"), undefined);
    const a = cache.get("a")!;
    a.objects[0]!.metadata.name = "changed";
    assert.equal(cache.get("a")!.objects[0]!.metadata.name, "a");
    assert.throws(() => new RenderCache(0), /capacity/);
  });
});

describe("chart versions and repository index", () => {
  it("orders versions as semver, across majors, prereleases first, without duplicates", () => {
    assert.deepEqual(
      sortVersions(["10.3.4", "9.11.2", "v10.3.4", "10.10.0", "10.3.4-rc1", "11.0.0", "10.4.0"]),
      ["9.11.2", "10.3.4-rc1", "10.3.4", "10.4.0", "10.10.0", "11.0.0"],
    );
    assert.ok(compareVersions("10.2.1", "10.10.0") < 0);
  });

  it("reads the chart's entries of an index, skipping malformed ones", () => {
    const index = [
      "apiVersion: v1",
      "entries:",
      "  gitlab:",
      `  - {version: 10.3.4, appVersion: 19.3.4, urls: [gitlab-10.3.4.tgz], digest: ${"a".repeat(64)}}`,
      "  - {version: ../../etc/passwd, urls: [x.tgz]}",
      "  - {version: 10.4.0, urls: []}",
      "  - {version: 10.2.1, urls: [https://charts.example/gitlab-10.2.1.tgz], digest: nothex}",
      "  other:",
      "  - {version: 1.0.0, urls: [o.tgz]}",
    ].join("\n");
    assert.deepEqual(parseIndex(index, "gitlab", "repo"), [
      { version: "10.3.4", appVersion: "19.3.4", urls: ["gitlab-10.3.4.tgz"], digest: "a".repeat(64) },
      { version: "10.2.1", urls: ["https://charts.example/gitlab-10.2.1.tgz"] },
    ]);
    assert.deepEqual(parseIndex("entries: {}", "gitlab", "repo"), []);
    assert.throws(() => parseIndex("just: text", "gitlab", "repo"), /index.yaml has no entries/);
  });
});

describe("chart source settings", () => {
  it("defaults: dynamic pull on, http refused, 30 minute index TTL", () => {
    const c = chartSourceConfigFromEnv({ DYNAMIC_CHART_REPOSITORY: "https://charts.example/gitlab" });
    assert.equal(c.dynamicPull, true);
    assert.equal(c.allowHttp, false);
    assert.equal(c.indexTtlMs, 30 * 60_000);
  });

  it("refuses an http repository unless DYNAMIC_CHART_ALLOW_HTTP, naming the variable", () => {
    assert.throws(
      () => chartSourceConfigFromEnv({ DYNAMIC_CHART_REPOSITORY: "http://charts.example" }),
      (e: unknown) =>
        e instanceof ChartSourceConfigError &&
        /DYNAMIC_CHART_REPOSITORY: http:\/\/ is refused/.test(e.message),
    );
    const c = chartSourceConfigFromEnv({
      DYNAMIC_CHART_REPOSITORY: "http://charts.example",
      DYNAMIC_CHART_ALLOW_HTTP: "true",
    });
    assert.equal(c.allowHttp, true);
  });

  it("names the variable of a malformed setting", () => {
    assert.throws(
      () => chartSourceConfigFromEnv({ ENABLE_DYNAMIC_CHART_PULL: "maybe" }),
      /ENABLE_DYNAMIC_CHART_PULL: must be true or false/,
    );
    assert.throws(
      () => chartSourceConfigFromEnv({ DYNAMIC_CHART_CACHE_TTL: "soon" }),
      /DYNAMIC_CHART_CACHE_TTL: must be a duration/,
    );
    assert.throws(
      () => chartSourceConfigFromEnv({ DYNAMIC_CHART_REPOSITORY: "not a url" }),
      /DYNAMIC_CHART_REPOSITORY: "not a url" is not a URL/,
    );
    assert.throws(
      () => chartSourceConfigFromEnv({ DYNAMIC_CHART_REPOSITORY: "https://u:p@charts.example" }),
      /credentials/,
    );
    assert.throws(
      () => chartSourceConfigFromEnv({ DYNAMIC_CHART_REPOSITORY: "ftp://charts.example" }),
      /https:\/\//,
    );
  });

  it("reads Go-style durations", () => {
    assert.equal(parseDuration("1h30m", "X"), 90 * 60_000);
    assert.equal(parseDuration("90s", "X"), 90_000);
    assert.equal(parseDuration("0s", "X"), 0);
  });
});
