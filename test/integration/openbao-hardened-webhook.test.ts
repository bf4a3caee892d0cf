import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { OpenBaoApiVersion, OpenBaoClusterKind } from "../../src/apis/index.js";
import { type RunningOperator, startOperator } from "../../src/cli/run.js";
import { VALIDATING_WEBHOOK_CONFIGURATION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { sharedEnv, uniqueName } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { CLUSTER_BASE, caseMessage, HARDENED_CASES } from "../support/openbao-policy-cases.js";
import { registerValidatingWebhook } from "../support/validating-webhook.js";

// The operator's webhook, called by the real kube-apiserver, refuses what profile Hardened refuses
// with no admission policy installed: the same cases (and messages) the chart's policy is shown on
// in openbao-admission-policies.test.ts. Scoped to this file's namespace.

async function createError(client: KubeClient, obj: KubeObject): Promise<string | undefined> {
  try {
    await client.create(OPENBAOCLUSTER, obj);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

describe("the openbao webhook refuses Hardened's refusals without the policies", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningOperator | undefined;
  const vwcName = uniqueName("po-openbao-webhook-test");

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obwh");
    const config = join(makeTempDir("openbao-webhook"), "operator.yaml");
    writeFileSync(
      config,
      `leaderElection: { enabled: false }
probes: { port: 0, host: 127.0.0.1 }
webhook: { port: 0, host: 127.0.0.1, configurationName: ${vwcName}, secretNamespace: ${ns}, secretName: webhook-serving, names: [127.0.0.1] }
targets:
  openbao:
    namespaces: [${ns}]
`,
    );
    op = await startOperator({
      configPath: config,
      kubeconfig: sharedEnv().kubeconfigPath,
      webhookPort: 0,
      logStream: new Writable({ write: (_c, _e, cb) => cb() }),
    });
    await registerValidatingWebhook(client, {
      configuration: vwcName,
      webhook: "openbaoclusters.openbao.org",
      port: op.webhook!.port,
      group: "openbao.org",
      resource: "openbaoclusters",
      namespace: ns,
    });
    await op.webhook!.refresh();
  });

  after(async () => {
    await op?.stop();
    await client.delete(VALIDATING_WEBHOOK_CONFIGURATION, vwcName).catch(() => undefined);
    client.close();
  });

  const cluster = (name: string, spec: Record<string, unknown>): KubeObject =>
    ({
      apiVersion: OpenBaoApiVersion,
      kind: OpenBaoClusterKind,
      metadata: { name, namespace: ns },
      spec: { ...CLUSTER_BASE, ...spec },
    }) as KubeObject;

  it("each case: refused by the webhook with the policy's message, its fixed twin admitted", async () => {
    const [first] = HARDENED_CASES;
    // The API server's webhook cache follows the new configuration within a moment.
    await eventually(
      async () => {
        const m = await createError(client, cluster("probe", first!.bad));
        if (m === undefined) await client.delete(OPENBAOCLUSTER, "probe", ns);
        return m?.includes("admission webhook") ? m : undefined;
      },
      30_000,
      "the webhook to refuse",
    );
    for (const c of HARDENED_CASES) {
      const name = c.rule.replace(/^hardened-/, "").slice(0, 40);
      const m = await createError(client, cluster(name, c.bad));
      assert.ok(m?.includes("admission webhook"), `${c.rule}: the webhook refused: ${m}`);
      assert.ok(m?.includes(caseMessage(c)), `${c.rule}: with the policy's message: ${m}`);
      assert.equal(await createError(client, cluster(name, c.good)), undefined, c.rule);
    }
  });
});
