import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { GitLabCore } from "../../src/apis/gitlabcore.js";
import { SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { registry } from "../../src/runtime/metrics.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  type RunningGitLab,
  waitForGitLab,
} from "../support/gitlab.js";
import { type FixtureGitLab, startFixtureGitLab } from "../support/gitlab-fixture.js";
import { clientFor, freshNamespace } from "../support/kube.js";
import { addProcess, assertEnvFromSecretsOnly, LeakSearch } from "../support/leak-search.js";

// No secret value outside a Secret, for the gitlab target, on the real API server with the real
// helm and the fixture chart (no node: the shared-secrets hook is switched off, so a release applies
// without a pod running). Canaries sit in the referenced Secrets (license, database and Redis
// passwords) and in the free-form chart values; one release is refused by the API server with a
// canary in the refused field, one fails helm's schema check on a three-character canary. Then the
// operator's debug log, events, statuses, every ConfigMap and annotation, workload specs and
// /metrics are searched byte for byte.

const canary = (what: string): string => `canary-${what}-${randomBytes(6).toString("hex")}`;

describe("gitlab target: no secret value outside a Secret", () => {
  let client: KubeClient;
  let ns: string;
  let gl: FixtureGitLab | undefined;
  let op: RunningGitLab | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "gl-leak");
    gl = await startFixtureGitLab(client, sharedEnv().kubeconfigPath, ns);
    op = gl.op;
  });
  after(async () => {
    await gl?.stop();
    client.close();
  });

  const c = {
    license: canary("license"),
    dbPassword: canary("db-password"),
    redisPassword: canary("redis-password"),
    valuesPassword: canary("values-smtp-password"),
    valuesToken: canary("values-runner-token"),
    refusedPolicy: canary("refused"),
    // Below the old masking threshold of four characters: helm's message must not show it either.
    shortValue: "q!9",
  };
  const secret = (name: string, data: Record<string, string>) =>
    client.apply(
      SECRET,
      { apiVersion: "v1", kind: "Secret", metadata: { name, namespace: ns }, stringData: data } as KubeObject,
      { fieldManager: "test-user", force: true },
    );
  // No hook: the shared-secrets Job would need a node to run.
  const base = {
    "shared-secrets": { enabled: false },
    global: { ingress: { enabled: false }, gatewayApi: { enabled: true } },
  };
  const spec = (values: Record<string, unknown>) => ({
    version: { type: "Static", version: "10.3.0" },
    hostname: "gitlab.example.com",
    license: { secretRef: { name: "gitlab-license", key: "license" } },
    postgresql: { host: "db.example.test", passwordSecretRef: { name: "gitlab-db", key: "password" } },
    redis: { host: "redis.example.test", passwordSecretRef: { name: "gitlab-redis", key: "password" } },
    chart: { values },
  });

  it("plants a canary in every secret input, drives releases through failures, and finds none where it must not be", async () => {
    await secret("gitlab-license", { license: c.license });
    await secret("gitlab-db", { password: c.dbPassword });
    await secret("gitlab-redis", { password: c.redisPassword });

    await applyGitLab(
      client,
      gitlabCore(ns, "good", {
        ...spec({
          ...base,
          global: {
            ...base.global,
            smtp: { password: c.valuesPassword },
            runner: { registrationToken: c.valuesToken },
          },
        }),
      }),
    );
    // The API server refuses every workload: the pull policy is not one it knows, and its message
    // quotes the value.
    await applyGitLab(
      client,
      gitlabCore(
        ns,
        "refused",
        spec({ ...base, global: { ...base.global, image: { pullPolicy: c.refusedPolicy } } }),
      ),
    );
    // helm's schema check refuses the domain (a pattern), quoting it.
    await applyGitLab(
      client,
      gitlabCore(
        ns,
        "badschema",
        spec({ ...base, global: { ...base.global, hosts: { domain: c.shortValue } } }),
      ),
    );

    const good = await waitForGitLab(
      client,
      ns,
      "good",
      (g) => (g.status?.renderedKinds?.length ?? 0) > 0 && conditionOf(g, "Initialized")?.status === "True",
      "the good release applied",
    );
    assert.ok(good.status?.renderedKinds?.includes("apps/v1/Deployment"));
    const refused = await waitForGitLab(
      client,
      ns,
      "refused",
      (g) => /ApplyFailed/.test(JSON.stringify(g.status?.conditions ?? [])),
      "the refused apply reported",
    );
    const applyFailed = JSON.stringify(refused.status?.conditions);
    assert.match(applyFailed, /imagePullPolicy/, "the message still names the field");
    assert.match(applyFailed, /value withheld/, "and withholds the value the API server quoted");
    const bad = await waitForGitLab(
      client,
      ns,
      "badschema",
      (g) => /RenderFailed/.test(JSON.stringify(g.status?.conditions ?? [])),
      "the schema failure reported",
    );
    assert.match(JSON.stringify(bad.status?.conditions), /global\.hosts\.domain/);
    // helm quotes the offending value in its message; the short one is masked there too.
    assert.match(JSON.stringify(bad.status?.conditions), /\[redacted\]/);

    const search = new LeakSearch();
    const pods = await search.addNamespace(client, ns, [GITLABCORE]);
    addProcess(search, op!.logs.join(""), await registry.metrics());
    assert.ok(search.text("operator log").includes('"level":"debug"'), "the log is at debug level");
    assert.ok(pods.length >= 3, `workloads searched: ${pods.length}`);
    assertEnvFromSecretsOnly(pods, Object.values(c));
    // The refused value really went out: the chart rendered it into the Deployments the API refused.
    assert.equal(
      ((await client.get(GITLABCORE, "refused", ns)) as GitLabCore).status?.phase === "Running",
      false,
    );
    const report = search.assertNone(Object.values(c), "gitlab");
    assert.ok(report.bytes > 10_000, `searched ${report.bytes} bytes`);
  });
});
