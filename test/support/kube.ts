import { randomBytes } from "node:crypto";
import { CONFIGMAP, NAMESPACE } from "../../src/runtime/builtin-types.js";
import { KubeClient, loadKubeConfig } from "../../src/runtime/client.js";

export function clientFor(kubeconfigPath: string): KubeClient {
  return new KubeClient(loadKubeConfig(kubeconfigPath), "platform-operator-tests");
}

/** A fresh namespace per test file: suites share one API server and isolate themselves by namespace. */
export async function freshNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  await client.create(NAMESPACE, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return name;
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export { CONFIGMAP, NAMESPACE };
