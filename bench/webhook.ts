/**
 * Admission latency of the validating webhook (`npm run bench:webhook`), against a real
 * kube-apiserver of its own: 1,000 VaultSeed creates without the webhook, then 1,000 with it
 * (the real decision, the VaultSeed informer cache behind it, a URL webhook on loopback), one at a
 * time so each latency is one request's. Prints p50/p99 of both and the added latency.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import {
  CUSTOM_RESOURCE_DEFINITION,
  NAMESPACE,
  VALIDATING_WEBHOOK_CONFIGURATION,
} from "../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../src/runtime/client.js";
import { createLogger } from "../src/runtime/log.js";
import { Manager } from "../src/runtime/manager.js";
import type { KubeObject } from "../src/runtime/types.js";
import { Webhook } from "../src/runtime/webhook.js";
import { startControlPlane } from "../src/testenv/controlplane.js";

const VAULTSEED = {
  group: "ohmlab.fr",
  version: "v1alpha1",
  kind: "VaultSeed",
  plural: "vaultseeds",
  namespaced: true,
};
const CRD_FILE = fileURLToPath(new URL("../../deploy/crds/ohmlab.fr_vaultseeds.yaml", import.meta.url));
const COUNT = Number(process.env["BENCH_CREATES"] ?? 1000);
const say = (l: string) => process.stderr.write(`[bench] ${l}\n`);

const seed = (ns: string, name: string): KubeObject => ({
  apiVersion: "ohmlab.fr/v1alpha1",
  kind: "VaultSeed",
  metadata: { name, namespace: ns },
  spec: {
    path: `secret/${ns}/${name}`,
    data: { user: name, password: "<random:32>", hash: "<bcrypt:password>" },
  },
});

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function creates(client: KubeClient, ns: string, prefix: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < COUNT; i++) {
    const t = performance.now();
    await client.create(VAULTSEED, seed(ns, `${prefix}-${i}`));
    out.push(performance.now() - t);
  }
  return out.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const cp = await startControlPlane({ log: (l) => say(l) });
  const client = new KubeClient(loadKubeConfig(cp.kubeconfigPath), "bench", {
    rateLimit: { qps: 5000, burst: 5000 },
  });
  const log = createLogger({ level: "warn" });
  const manager = new Manager({ target: "vault", client, log });
  let webhook: Webhook | undefined;
  try {
    await client.apply(CUSTOM_RESOURCE_DEFINITION, parse(readFileSync(CRD_FILE, "utf8")) as KubeObject, {
      fieldManager: "bench",
      force: true,
    });
    for (let i = 0; ; i++) {
      client.resources.refresh();
      if (await client.resources.find("ohmlab.fr/v1alpha1", "VaultSeed")) break;
      if (i > 200) throw new Error("the VaultSeed CRD is not served");
      await new Promise((r) => setTimeout(r, 100));
    }
    const ns = "bench";
    await client.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    // The decision as the vault target registers it, on the same kind of informer cache.
    const informer = manager.informer(VAULTSEED);
    const { vaultSeedVerdict } = await import("../src/targets/vault/admission.js");
    manager.admission.register("ohmlab.fr", "VaultSeed", (r) => vaultSeedVerdict(r, () => informer.list()));
    await manager.start();
    const without = await creates(client, ns, "plain");
    say(`without webhook: ${COUNT} creates`);

    webhook = new Webhook({
      port: 0,
      host: "127.0.0.1",
      observeOnly: false,
      certificate: {
        kind: "secret",
        namespace: ns,
        secretName: "webhook-tls",
        names: ["127.0.0.1"],
        webhookConfiguration: "bench",
      },
      client,
      log,
      checkFor: (g, k) => manager.admission.find(g, k),
    });
    await webhook.start();
    await client.create(VALIDATING_WEBHOOK_CONFIGURATION, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "bench" },
      webhooks: [
        {
          name: "vaultseeds.ohmlab.fr",
          clientConfig: { url: `https://127.0.0.1:${webhook.port}/validate` },
          rules: [
            {
              apiGroups: ["ohmlab.fr"],
              apiVersions: ["*"],
              operations: ["CREATE", "UPDATE"],
              resources: ["vaultseeds"],
            },
          ],
          failurePolicy: "Fail",
          sideEffects: "None",
          matchPolicy: "Equivalent",
          timeoutSeconds: 5,
          admissionReviewVersions: ["v1"],
        },
      ],
    });
    await webhook.refresh();
    // Wait until the API server calls it: a refused duplicate path proves the webhook answers.
    for (let i = 0; ; i++) {
      try {
        await client.create(VAULTSEED, {
          ...seed(ns, `probe-${i}`),
          spec: { path: `secret/${ns}/plain-0`, data: { a: "1" } },
        });
      } catch (e) {
        if (String((e as Error).message).includes("admission webhook")) break;
      }
      if (i > 300) throw new Error("the API server never called the webhook");
      await new Promise((r) => setTimeout(r, 100));
    }
    const withHook = await creates(client, ns, "hooked");
    const row = (name: string, xs: number[]) =>
      `${name.padEnd(16)} p50 ${quantile(xs, 0.5).toFixed(2).padStart(7)} ms   p99 ${quantile(xs, 0.99).toFixed(2).padStart(7)} ms`;
    console.log(`VaultSeed creates, ${COUNT} each, one at a time (cache grows to ${2 * COUNT} objects)`);
    console.log(row("without webhook", without));
    console.log(row("with webhook", withHook));
    console.log(
      `added            p50 ${(quantile(withHook, 0.5) - quantile(without, 0.5)).toFixed(2).padStart(7)} ms   p99 ${(quantile(withHook, 0.99) - quantile(without, 0.99)).toFixed(2).padStart(7)} ms`,
    );
  } finally {
    await webhook?.stop();
    await manager.stop();
    client.close();
    await cp.stop();
  }
}

await main();
