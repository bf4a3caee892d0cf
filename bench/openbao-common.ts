import { randomBytes } from "node:crypto";
import { OPENBAO_CLUSTER } from "../src/cli/openbao-formation.js";
import { NAMESPACE, SERVICE_ACCOUNT } from "../src/runtime/builtin-types.js";
import type { KubeClient } from "../src/runtime/client.js";
import { BAO_DEFAULT_VERSION } from "../src/testenv/cache.js";
import { apiWrites, metricSum } from "../test/support/openbao-operator.js";
import type { OperatorInNode } from "./operator-in-node.js";

// What bench:openbao's parts share: waiting, namespaces, clusters, and "settled".

export const say = (line: string) => process.stderr.write(`[bench] ${line}\n`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Polls `check` every `everyMs` until it returns a value; fails after `timeoutMs`, naming `what`. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  everyMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds(timeoutMs)} waiting for ${what}`);
    await sleep(everyMs);
  }
}

export async function freshNamespace(client: KubeClient, prefix: string): Promise<string> {
  const ns = `${prefix}-${randomBytes(3).toString("hex")}`;
  await client.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  // Pods are refused until the ServiceAccount controller has made `default` there.
  await until(
    `ServiceAccount ${ns}/default`,
    () => client.getOrUndefined(SERVICE_ACCOUNT, "default", ns),
    60_000,
    200,
  );
  return ns;
}

export async function createCluster(client: KubeClient, ns: string, replicas: number): Promise<void> {
  await client.create(OPENBAO_CLUSTER, {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "bao", namespace: ns },
    spec: { version: BAO_DEFAULT_VERSION, replicas, storage: { size: "128Mi" } },
  });
}

/** Every cluster passed once under this process, then no API write for 15 s. */
export async function settled(op: OperatorInNode, clusters: number): Promise<void> {
  let writes = -1;
  let since = performance.now();
  await until(
    `${clusters} cluster(s) to settle`,
    async () => {
      const m = await op.metrics();
      const w = apiWrites(m);
      if (w !== writes) {
        writes = w;
        since = performance.now();
        return undefined;
      }
      const passes = metricSum(m, "controller_runtime_reconcile_total", { controller: "openbaocluster" });
      return passes >= clusters && performance.now() - since >= 15_000 ? true : undefined;
    },
    1_200_000,
    2000,
  );
}
