import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP, EVENTS_V1, SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  type RunningGitLab,
  waitForGitLab,
} from "../support/gitlab.js";
import { type FixtureGitLab, startFixtureGitLab } from "../support/gitlab-fixture.js";
import { jobStatus } from "../support/job-status.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// spec.chart.valuesFrom (GitLab's newer GitLabCore spec, "Values from ConfigMaps and Secrets") with
// the fixture chart rendered by helm on the shared API server: labelled ConfigMaps and Secrets of
// the namespace, merged in order over the derived values and under spec.chart.values; a missing or
// unlabelled required entry renders nothing (ValuesReferenceNotFound), content that is no map is
// refused (ValuesReferenceInvalid) without being quoted, and a change to a referenced object
// renders again.

const DEPLOYMENT: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
};
const LABEL = { "operator.gitlab.com/config-source": "true" };
const quiet = {
  "shared-secrets": { enabled: false },
  upgradeCheck: { enabled: false },
  global: { ingress: { enabled: false } },
};
const SECRET_WORD = "hunter2-do-not-print";

describe("GitLabCore values from ConfigMaps and Secrets", () => {
  let client: KubeClient;
  let ns: string;
  let gl: FixtureGitLab | undefined;
  let op: RunningGitLab | undefined;

  const configMap = (name: string, data: Record<string, string>, labelled = true) =>
    client.apply(
      CONFIGMAP,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: ns, ...(labelled ? { labels: LABEL } : {}) },
        data,
      },
      { fieldManager: "platform-team", force: true },
    );
  const secret = (name: string, stringData: Record<string, string>) =>
    client.apply(
      SECRET,
      { apiVersion: "v1", kind: "Secret", metadata: { name, namespace: ns, labels: LABEL }, stringData },
      { fieldManager: "platform-team", force: true },
    );
  const create = (name: string, valuesFrom: unknown[], values: Record<string, unknown> = quiet) =>
    applyGitLab(
      client,
      gitlabCore(ns, name, {
        version: { type: "Static", version: "10.2.1" },
        hostname: "gitlab.example.com",
        chart: { valuesFrom, values },
      }),
    );
  const replicas = async (name: string) =>
    ((await client.get<KubeObject>(DEPLOYMENT, name, ns)) as { spec?: { replicas?: number } }).spec?.replicas;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "gl-vfrom");
    gl = await startFixtureGitLab(client, sharedEnv().kubeconfigPath, ns, {
      gatewayApi: false,
      versions: (v) => v === "10.2.1" || v === "10.3.0",
      settings: { requeueInterval: "2s", concurrency: 3 },
    });
    op = gl.op;
  });
  after(async () => {
    await gl?.stop();
    client?.close();
  });

  it("entries merge in order over the derived values and under spec.chart.values; an optional missing one adds nothing", async () => {
    await configMap("base-values", {
      "values.yaml": "gitlab:\n  webservice:\n    replicas: 2\n  sidekiq:\n    replicas: 2\n",
    });
    await secret("secret-values", { "custom.yaml": "gitlab:\n  webservice:\n    replicas: 3\n" });
    await configMap("empty-values", { "values.yaml": "" });
    await create(
      "vf",
      [
        { kind: "ConfigMap", name: "base-values" },
        { kind: "Secret", name: "secret-values", valuesKey: "custom.yaml" },
        { kind: "ConfigMap", name: "empty-values" },
        { kind: "ConfigMap", name: "nowhere", optional: true },
      ],
      { ...quiet, gitlab: { sidekiq: { replicas: 4 } } },
    );
    await waitForGitLab(client, ns, "vf", (g) => g.status?.version === "10.2.1", "10.2.1 applied", 120_000);
    assert.equal(await replicas("vf-webservice"), 3, "the later entry (the Secret) wins over the earlier");
    assert.equal(await replicas("vf-sidekiq"), 4, "spec.chart.values wins over every entry");
  });

  it("a change to a referenced Secret renders again", async () => {
    await secret("secret-values", { "custom.yaml": "gitlab:\n  webservice:\n    replicas: 5\n" });
    await eventually(
      async () => ((await replicas("vf-webservice")) === 5 ? true : undefined),
      60_000,
      "the webservice Deployment to follow the Secret",
    );
  });

  it("an unlabelled (or missing) required entry renders nothing: ValuesReferenceNotFound; labelling it renders", async () => {
    await configMap("unlabelled", { "values.yaml": "gitlab:\n  webservice:\n    replicas: 0\n" }, false);
    await create("nf", [{ kind: "ConfigMap", name: "unlabelled" }]);
    const o = await waitForGitLab(
      client,
      ns,
      "nf",
      (g) => conditionOf(g, "Initialized")?.reason === "ValuesReferenceNotFound",
      "ValuesReferenceNotFound",
      60_000,
    );
    const init = conditionOf(o, "Initialized")!;
    assert.equal(init.status, "False");
    assert.match(
      init.message,
      /spec\.chart\.valuesFrom\[0\]: ConfigMap unlabelled not found .*config-source/,
    );
    assert.ok(
      isNotFound(await client.get(DEPLOYMENT, "nf-webservice", ns).catch((e: unknown) => e)),
      "nothing rendered, nothing applied",
    );

    await configMap("unlabelled", { "values.yaml": "gitlab:\n  webservice:\n    replicas: 0\n" }, true);
    await waitForGitLab(
      client,
      ns,
      "nf",
      (g) => g.status?.version === "10.2.1",
      "applied once labelled",
      60_000,
    );
    assert.equal(await replicas("nf-webservice"), 0);
  });

  it("content that is not a map is ValuesReferenceInvalid, and the content is quoted nowhere", async () => {
    await secret("bad-values", { "values.yaml": `- ${SECRET_WORD}\n- more\n` });
    await create("iv", [{ kind: "Secret", name: "bad-values" }]);
    const o = await waitForGitLab(
      client,
      ns,
      "iv",
      (g) => conditionOf(g, "Initialized")?.reason === "ValuesReferenceInvalid",
      "ValuesReferenceInvalid",
      60_000,
    );
    assert.match(conditionOf(o, "Initialized")!.message, /Secret bad-values key values\.yaml holds a list/);
    assert.ok(!JSON.stringify(o.status).includes(SECRET_WORD), "not in the status");
    const events = await client.list<KubeObject>(EVENTS_V1, { namespace: ns });
    assert.ok(!JSON.stringify(events.items).includes(SECRET_WORD), "not in events");
    assert.ok(!op!.logs.join("").includes(SECRET_WORD), "not in the operator's logs");

    // Broken YAML: the parser's own message (which quotes the text) is not passed on either.
    await secret("bad-values", { "values.yaml": `a: [${SECRET_WORD}\n` });
    const broken = await waitForGitLab(
      client,
      ns,
      "iv",
      (g) => /is not valid YAML/.test(conditionOf(g, "Initialized")?.message ?? ""),
      "invalid YAML reported",
      60_000,
    );
    assert.ok(!JSON.stringify(broken.status).includes(SECRET_WORD));
    assert.ok(!op!.logs.join("").includes(SECRET_WORD));
  });

  it("a versionRef ConfigMap follows the same label rule: unlabelled is not found (VersionUnresolved naming the label); labelling it installs", async () => {
    await configMap("version", { chart: "10.2.1" }, false);
    const spec = {
      version: { type: "Static", versionRef: { kind: "ConfigMap", name: "version", key: "chart" } },
      hostname: "gitlab.example.com",
      chart: { values: quiet },
    };
    await applyGitLab(client, gitlabCore(ns, "vr", spec));
    const o = await waitForGitLab(
      client,
      ns,
      "vr",
      (g) => conditionOf(g, "Progressing")?.reason === "VersionUnresolved",
      "VersionUnresolved for the unlabelled ConfigMap",
      60_000,
    );
    assert.match(
      conditionOf(o, "Progressing")!.message,
      /spec\.version\.versionRef: ConfigMap version not found, or not labelled operator\.gitlab\.com\/config-source: "true"/,
    );
    assert.equal(o.status?.version, undefined, "nothing installed");
    await configMap("version", { chart: "10.2.1" }, true);
    await waitForGitLab(
      client,
      ns,
      "vr",
      (g) => g.status?.version === "10.2.1",
      "installed once labelled",
      60_000,
    );
  });

  it("an upgrade step's preflight dry-runs the objects of the same values, valuesFrom included", async () => {
    // The entry turns sidekiq off: the step's dry run must not see the sidekiq Deployment.
    await configMap("no-sidekiq", { "values.yaml": "gitlab:\n  sidekiq:\n    enabled: false\n" });
    const at = (version: string) =>
      applyGitLab(
        client,
        gitlabCore(ns, "pv", {
          version: { type: "Static", version },
          hostname: "gitlab.example.com",
          upgrade: { skipBatchedMigrationCheck: true },
          chart: { valuesFrom: [{ kind: "ConfigMap", name: "no-sidekiq" }], values: quiet },
        }),
      );
    await at("10.2.1");
    await waitForGitLab(client, ns, "pv", (g) => g.status?.version === "10.2.1", "10.2.1 applied", 120_000);
    // No Job controller here: the deployed version's migrations end as it would write it.
    await jobStatus(client, ns, "pv-migrations-10-2-1", { end: "Complete" });
    await at("10.3.0");
    await waitForGitLab(client, ns, "pv", (g) => g.status?.version === "10.3.0", "10.3.0 applied", 120_000);
    const preflights = op!.lines("upgrade preflight passed", `${ns}/pv`);
    assert.equal(preflights.length, 1, "one dry run, on the step's first pass");
    assert.deepEqual([...(preflights[0]!["accepted"] as string[])].sort(), [
      `Deployment ${ns}/pv-webservice`,
      `Job ${ns}/pv-migrations-10-3-0-pre`,
    ]);
  });

  // spec.clickhouse ("GitLab ClickHouse integration"): the outcome is published in the status the API
  // server stores (its schema must keep the field), and chart values win, valuesFrom included.
  it("spec.clickhouse sets status.clickHouseEnabled; a valuesFrom entry removing the URL turns it off", async () => {
    const clickhouse = {
      url: "https://clickhouse.example.test:8443",
      database: "gitlab",
      user: "gitlab",
      passwordSecretRef: { name: "clickhouse-password", key: "password" },
    };
    const ch = (valuesFrom: unknown[]) =>
      applyGitLab(
        client,
        gitlabCore(ns, "ch", {
          version: { type: "Static", version: "10.2.1" },
          hostname: "gitlab.example.com",
          clickhouse,
          chart: { valuesFrom, values: quiet },
        }),
      );
    await ch([]);
    await waitForGitLab(
      client,
      ns,
      "ch",
      (g) => g.status?.version === "10.2.1" && g.status?.clickHouseEnabled === true,
      "10.2.1 applied with ClickHouse on",
      120_000,
    );
    await configMap("no-clickhouse", { "values.yaml": 'global:\n  clickhouse:\n    main:\n      url: ""\n' });
    await ch([{ kind: "ConfigMap", name: "no-clickhouse" }]);
    await waitForGitLab(
      client,
      ns,
      "ch",
      (g) => g.status?.clickHouseEnabled === false,
      "ClickHouse off once the entry removes the URL",
      60_000,
    );
  });
});
