import { createServer } from "node:net";
import { allKinds } from "../apis/index.js";
import { VALIDATING_WEBHOOK_CONFIGURATION } from "../runtime/builtin-types.js";
import type { KubeClient } from "../runtime/client.js";
import { kindsOf } from "./targets.js";

// `npm start`'s admission webhooks: each operator process of the local default serves the kinds of
// its targets, as the chart's processes do, but the API server calls it by URL (the process is not
// behind a Service): the host process at the host's address the API server reaches, the openbao
// process at the node's own address. The configuration is written before the process starts, so the
// operator finds it and puts its CA into it at once; until then writes of those kinds are refused
// (failurePolicy Fail), and nothing writes them before the CA is in.

export interface DevWebhook {
  /** The ValidatingWebhookConfiguration's name, and the process's serving Secret's. */
  name: string;
  /** The address the process listens on and the API server dials (an IP: the leaf names it). */
  host: string;
  port: number;
  targets: string[];
}

/** A port free on `host` now (the kernel's pick); the process binds it a moment later. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The `webhook:` section of the process's operator.yaml. */
export function webhookSection(w: DevWebhook, secretNamespace: string): string {
  return `webhook:
  port: ${w.port}
  host: ${w.host}
  configurationName: ${w.name}
  secretNamespace: ${secretNamespace}
  secretName: ${w.name}-tls
  names: [${w.host}]
`;
}

/** The configuration of one process: its targets' kinds only, refused while it is down. */
export async function createWebhookConfiguration(client: KubeClient, w: DevWebhook): Promise<void> {
  const served = new Set(kindsOf(w.targets));
  const byGroup = new Map<string, string[]>();
  for (const k of allKinds)
    if (served.has(k.kind)) byGroup.set(k.group, [...(byGroup.get(k.group) ?? []), k.plural]);
  await client.apply(
    VALIDATING_WEBHOOK_CONFIGURATION,
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: w.name },
      webhooks: [...byGroup].map(([group, resources]) => ({
        name: `${w.targets.join("-")}.${group}`,
        admissionReviewVersions: ["v1"],
        clientConfig: { url: `https://${w.host}:${w.port}/validate` },
        rules: [
          {
            apiGroups: [group],
            apiVersions: ["*"],
            operations: ["CREATE", "UPDATE"],
            resources,
            scope: "Namespaced",
          },
        ],
        failurePolicy: "Fail",
        matchPolicy: "Equivalent",
        sideEffects: "None",
        timeoutSeconds: 5,
      })),
    },
    { fieldManager: "platform-operator-dev" },
  );
}

/**
 * Waits until the operator has put its CA into each configuration (it does so as its webhook
 * starts), looking four times a second: only then are writes of the kinds admitted.
 */
export async function waitForCaBundles(
  client: KubeClient,
  names: string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const missing = new Set(names);
  while (missing.size > 0) {
    for (const name of [...missing]) {
      const vwc = await client.getOrUndefined(VALIDATING_WEBHOOK_CONFIGURATION, name);
      const hooks = (vwc?.["webhooks"] as { clientConfig?: { caBundle?: string } }[] | undefined) ?? [];
      if (hooks.length > 0 && hooks.every((h) => h.clientConfig?.caBundle)) missing.delete(name);
    }
    if (missing.size === 0) return;
    if (Date.now() > deadline)
      throw new Error(
        `the admission webhook's CA is not in ${[...missing].join(", ")} after ${timeoutMs / 1000} s: the operator process did not start its webhook (see its log)`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}
