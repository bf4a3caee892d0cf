import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { type RunningOperator, startOperator } from "../../src/cli/run.js";
import { CONFIGMAP, SECRET, VALIDATING_WEBHOOK_CONFIGURATION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { sharedEnv, uniqueName } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { eventually } from "../support/kube.js";
import { registerValidatingWebhook } from "../support/validating-webhook.js";
import { seed, vaultSuite } from "../support/vault.js";

// The real kube-apiserver calls the operator's webhook (a URL webhook on loopback, where the shared
// API server runs), scoped to this file's namespace so other suites' VaultSeeds are not affected.

async function createError(client: KubeClient, obj: KubeObject): Promise<string | undefined> {
  try {
    await client.create(VAULTSEED, obj);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

describe("admission webhook against the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let op: RunningOperator | undefined;
  const vwcName = uniqueName("po-webhook-test");
  const secretName = "webhook-serving";

  before(async () => {
    ({ client, ns } = await vaultSuite("webhook"));
    const dir = makeTempDir("webhook");
    const config = join(dir, "operator.yaml");
    process.env["WEBHOOK_TEST_BAO"] = sharedEnv().bao.addr;
    writeFileSync(
      config,
      `leaderElection: { enabled: false }
probes: { port: 0, host: 127.0.0.1 }
webhook: { port: 0, host: 127.0.0.1, configurationName: ${vwcName}, secretNamespace: ${ns}, secretName: ${secretName}, names: [127.0.0.1] }
targets:
  vault:
    namespaces: [${ns}]
    backend:
      address: \${WEBHOOK_TEST_BAO}
      allowHttp: true
      auth:
        kubernetes: { mount: k8s-${ns}, role: ohmlab-controller, audience: vault, serviceAccount: { namespace: ${ns}, name: ohmlab-controller } }
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
      webhook: "vaultseeds.ohmlab.fr",
      port: op.webhook!.port,
      group: "ohmlab.fr",
      resource: "vaultseeds",
      namespace: ns,
    });
    // The configuration exists now: the operator puts its CA into it.
    await op.webhook!.refresh();
  });

  after(async () => {
    await op?.stop();
    await client.delete(VALIDATING_WEBHOOK_CONFIGURATION, vwcName).catch(() => undefined);
    client.close();
  });

  it("refuses bad objects naming the field, admits good ones, across a certificate rotation", async () => {
    const vwc = await client.get(VALIDATING_WEBHOOK_CONFIGURATION, vwcName);
    const bundle = (vwc["webhooks"] as { clientConfig: { caBundle?: string } }[])[0]!.clientConfig.caBundle;
    assert.ok(bundle && Buffer.from(bundle, "base64").toString().includes("BEGIN CERTIFICATE"));

    // rotate.keys names a key data does not declare: the CRD admits it, only the webhook can refuse.
    const bad = seed(ns, "bad", {
      path: `secret/${ns}/bad`,
      data: { a: "<random:8>" },
      rotate: { token: "t1", keys: ["nope"] },
    });
    // The API server's webhook cache follows the new configuration within a moment.
    const refusal = await eventually(
      async () => {
        const m = await createError(client, bad);
        if (m === undefined) await client.delete(VAULTSEED, "bad", ns);
        return m?.includes("admission webhook") ? m : undefined;
      },
      30_000,
      "the webhook to refuse",
    );
    assert.match(
      refusal,
      /VaultSeed .*bad is invalid: .*rotate\.keys names nope, which data does not declare/,
    );

    const good = seed(ns, "good", { path: `secret/${ns}/good`, data: { a: "<random:8>" } });
    assert.equal(await createError(client, good), undefined);

    const twin = seed(ns, "twin", { path: `secret/${ns}/good`, data: { b: "<random:8>" } });
    const shared = await eventually(() => createError(client, twin), 10_000, "the cache to hold good");
    assert.match(shared, /path secret\/.*\/good is also seeded by .*\/good/);

    const before = (await client.get(SECRET, secretName, ns))["data"] as Record<string, string>;
    await op!.webhook!.refresh(true);
    const rotated = (await client.get(SECRET, secretName, ns))["data"] as Record<string, string>;
    assert.notEqual(rotated["tls.crt"], before["tls.crt"], "a new leaf was issued");
    assert.equal(rotated["ca.crt"], before["ca.crt"], "of the same CA, which the API server trusts");
    assert.equal(
      await createError(client, seed(ns, "after", { path: `secret/${ns}/after`, data: { a: "x" } })),
      undefined,
    );
    assert.match((await createError(client, bad))!, /rotate\.keys names nope/);
  });

  it("with the operator stopped, our kinds fail closed and a ConfigMap is still written", async () => {
    await op!.stop();
    op = undefined;
    const m = await createError(
      client,
      seed(ns, "while-down", { path: `secret/${ns}/down`, data: { a: "x" } }),
    );
    assert.match(m ?? "", /failed calling webhook/);
    await client.create(CONFIGMAP, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "still-writable", namespace: ns },
      data: { a: "b" },
    });
  });
});
