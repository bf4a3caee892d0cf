import type { KubeClient } from "../../../runtime/client.js";
import { ApiError, errorMessage } from "../../../runtime/errors.js";
import type { KubeObject, ObjectMeta, ResourceType } from "../../../runtime/types.js";

/** "Kind namespace/name", for messages. */
export function describeObject(o: {
  kind?: string;
  metadata: { name?: string; namespace?: string };
}): string {
  const ns = o.metadata.namespace;
  return `${o.kind ?? "object"} ${ns ? `${ns}/` : ""}${o.metadata.name ?? "(no name)"}`;
}

/**
 * An API error's text for status, events and logs. The server's message can quote the values it
 * refused, so for a Secret only the status code and reason are kept.
 */
export function redactedError(o: KubeObject | { kind?: string }, e: unknown): string {
  if (o.kind === "Secret") {
    if (e instanceof ApiError)
      return `HTTP ${e.code}${e.reason ? ` ${e.reason}` : ""} (message withheld: Secret)`;
    return "request failed (message withheld: Secret)";
  }
  return errorMessage(e);
}

/**
 * Waits `ms`, or until the signal aborts. The abort listener is removed when the timer fires: a poll
 * sleeps on one signal many times, and a listener left behind per sleep is a leak (Node warns
 * MaxListenersExceeded once 11 pile up while a hook runs).
 */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? new Error("aborted"));
      return;
    }
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason ?? new Error("aborted"));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Polls every `intervalMs` until `check` answers something other than undefined, or fails after `timeoutMs`. */
export async function poll<T>(
  check: () => Promise<T | undefined>,
  opts: { timeoutMs: number; intervalMs?: number; signal?: AbortSignal; what: string },
): Promise<T> {
  const deadline = performance.now() + opts.timeoutMs;
  for (;;) {
    opts.signal?.throwIfAborted();
    const v = await check();
    if (v !== undefined) return v;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${opts.timeoutMs / 1000} s waiting for ${opts.what}`);
    await sleep(opts.intervalMs ?? 1000, opts.signal);
  }
}

/** Waits until the object with this uid no longer exists (a new one of the same name does not count). */
export async function waitUntilGone(
  client: KubeClient,
  type: ResourceType,
  meta: Pick<ObjectMeta, "name" | "namespace">,
  uid: string,
  signal?: AbortSignal,
  timeoutMs = 120_000,
): Promise<void> {
  await poll(
    async () => {
      const o = await client.getOrUndefined(type, meta.name!, meta.namespace);
      return !o || o.metadata.uid !== uid ? true : undefined;
    },
    { timeoutMs, intervalMs: 500, signal, what: `${type.kind} ${meta.name} to be deleted` },
  );
}
