import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import { KubeClient } from "../../src/runtime/client.js";
import { ApiError } from "../../src/runtime/errors.js";
import { restClientRequests } from "../../src/runtime/metrics.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { staticCredentials } from "../support/credentials.js";
import { CONFIGMAP, clientFor, eventually, freshNamespace } from "../support/kube.js";
import { grantInNamespace } from "../support/rbac.js";

const t = (
  group: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  version = "v1",
): ResourceType => ({
  group,
  version,
  kind,
  plural,
  namespaced,
});
const PRIORITY_LEVEL = t(
  "flowcontrol.apiserver.k8s.io",
  "PriorityLevelConfiguration",
  "prioritylevelconfigurations",
  false,
);
const FLOW_SCHEMA = t("flowcontrol.apiserver.k8s.io", "FlowSchema", "flowschemas", false);

async function tooManyRequests(): Promise<number> {
  const m = await restClientRequests.get();
  return m.values.filter((v) => v.labels["code"] === "429").reduce((a, v) => a + v.value, 0);
}

/**
 * The real API server's priority and fairness: a FlowSchema sends one ServiceAccount's requests to
 * a priority level with no seats that rejects, so the server itself answers 429 with Retry-After.
 */
describe("API priority and fairness answers 429: the client honours it within bounds", () => {
  let admin: KubeClient;
  let throttled: KubeClient;
  let ns: string;
  const name = `rt-apf-${randomBytes(3).toString("hex")}`;

  before(async () => {
    const env = sharedEnv();
    admin = clientFor(env.kubeconfigPath);
    ns = await freshNamespace(admin, "rt-apf");
    const apply = (type: ResourceType, body: object) =>
      admin.apply(type, body as never, { fieldManager: "t", force: true });
    await apply(SERVICE_ACCOUNT, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "throttled", namespace: ns },
    });
    // Waits until the authorizer sees the grant, so no request below is refused with 403.
    await grantInNamespace(admin, ns, "throttled", "read", [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list"] },
    ]);
    await apply(PRIORITY_LEVEL, {
      apiVersion: "flowcontrol.apiserver.k8s.io/v1",
      kind: "PriorityLevelConfiguration",
      metadata: { name },
      spec: {
        type: "Limited",
        limited: {
          nominalConcurrencyShares: 0,
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: { type: "Reject" },
        },
      },
    });
    await apply(FLOW_SCHEMA, {
      apiVersion: "flowcontrol.apiserver.k8s.io/v1",
      kind: "FlowSchema",
      metadata: { name },
      spec: {
        priorityLevelConfiguration: { name },
        matchingPrecedence: 100,
        distinguisherMethod: { type: "ByUser" },
        rules: [
          {
            subjects: [{ kind: "ServiceAccount", serviceAccount: { name: "throttled", namespace: ns } }],
            resourceRules: [
              { verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"], clusterScope: true },
            ],
          },
        ],
      },
    });
    await admin.apply(
      CONFIGMAP,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "target", namespace: ns } },
      { fieldManager: "t" },
    );
    const token = await admin.request<{ status: { token: string } }>({
      method: "POST",
      path: `/api/v1/namespaces/${ns}/serviceaccounts/throttled/token`,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 600 },
      },
    });
    const kc = staticCredentials({ server: env.server, caPem: env.caPem, token: token.status.token });
    // No client-side limit here: the point is to make the server push back.
    throttled = new KubeClient(kc, "platform-operator-tests", {
      maxRetries: 2,
      rateLimit: { qps: 1000, burst: 1000 },
    });
  });
  after(async () => {
    throttled?.close();
    await admin.delete(FLOW_SCHEMA, name).catch(() => undefined);
    await admin.delete(PRIORITY_LEVEL, name).catch(() => undefined);
    admin.close();
  });

  it("the server's 429s carry Retry-After; each request is retried at most maxRetries times", async (t) => {
    // Its priority level has no seats: a request is only dispatched while the level is idle, so
    // requests sent together are rejected but for one. Storm until the server has rejected some.
    const n = 20;
    const outcomes = await eventually(
      async () => {
        const before = await tooManyRequests();
        const results = await Promise.all(
          Array.from({ length: n }, () =>
            throttled.get(CONFIGMAP, "target", ns).then(
              () => "ok",
              (e: unknown) => e,
            ),
          ),
        );
        const rejected = (await tooManyRequests()) - before;
        return rejected > 0 ? { results, rejected } : undefined;
      },
      60_000,
      "the API server to reject concurrent requests of the ServiceAccount",
    );
    const failures = outcomes.results.filter((r) => r !== "ok");
    t.diagnostic(`${outcomes.rejected} answers 429, ${n - failures.length} of ${n} requests succeeded`);
    for (const f of failures) {
      assert.ok(f instanceof ApiError && f.code === 429, String(f));
      assert.match((f as Error).message, /gave up after 3 attempts answered with Retry-After/);
    }
    // Every 429 was either retried (at most twice per request) or returned after the third.
    assert.ok(outcomes.rejected <= n * 3, `${outcomes.rejected} rejections for ${n} requests`);
    assert.ok(
      outcomes.rejected >= failures.length * 3,
      "a request that failed was tried exactly 1 + maxRetries times",
    );
  });
});
