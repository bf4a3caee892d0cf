import { BaoClient } from "../baoclient/client.js";
import type { Probe } from "./plan.js";

/**
 * The restored pod's checks: OpenBao answers unsealed, and the canary path reads back with data.
 * Only the outcome leaves this file: never the token, never the value read.
 */
export class ProbeClient extends BaoClient {
  /** HTTP status of a GET of `path` (under /v1/), and whether the answer carried data. */
  async read(
    path: string,
    token: string,
    signal?: AbortSignal,
  ): Promise<{ status: number; hasData: boolean }> {
    const clean = path.replace(/^\/+/, "").replace(/^v1\//, "");
    const r = await this.send("GET", `/v1/${clean}`, token, undefined, signal);
    const body = r.body as { data?: unknown } | undefined;
    const data = body?.data;
    return { status: r.status, hasData: data !== undefined && data !== null };
  }
}

export interface CanarySpec {
  path: string;
  token: string;
}

/** Probes one pod. Errors reaching it are a sealed (not answering) pod, said with the error. */
export async function probePod(
  client: ProbeClient,
  canary: CanarySpec | undefined,
  signal?: AbortSignal,
): Promise<Probe> {
  let sealed: boolean;
  try {
    sealed = (await client.health(signal)).sealed;
  } catch (e) {
    signal?.throwIfAborted();
    return {
      kind: "sealed",
      message: `the restored pod did not answer: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  if (sealed)
    return {
      kind: "sealed",
      message: "the restored pod answers sealed: its seal cannot open the restored data",
    };
  if (!canary) return { kind: "ok" };
  try {
    const r = await client.read(canary.path, canary.token, signal);
    if (r.status === 200 && r.hasData) return { kind: "ok" };
    return {
      kind: "canary-missing",
      message: `${canary.path} answered HTTP ${r.status}${r.status === 200 ? " without data" : ""} from the restored data`,
    };
  } catch (e) {
    signal?.throwIfAborted();
    return {
      kind: "canary-missing",
      message: `reading ${canary.path}: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
}
