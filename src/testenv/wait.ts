import { formatDuration } from "./duration.js";
import type { ServiceProcess } from "./processes.js";

export interface WaitOptions {
  what: string;
  timeoutMs: number;
  intervalMs?: number;
  /** Fails fast, with its log tail, when this process exits while we wait for it. */
  service?: ServiceProcess;
}

/** Polls `check` until it returns true; errors thrown by `check` count as "not yet". */
export async function waitUntil(check: () => Promise<boolean>, opts: WaitOptions): Promise<void> {
  const started = Date.now();
  let lastError = "";
  for (;;) {
    if (opts.service && !opts.service.isRunning()) {
      throw new Error(
        `${opts.service.name} exited while waiting for ${opts.what}:\n${await opts.service.tail()}`,
      );
    }
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() - started > opts.timeoutMs) {
      const log = opts.service ? `\n--- ${opts.service.logPath} ---\n${await opts.service.tail()}` : "";
      const last = lastError ? ` (last error: ${lastError})` : "";
      throw new Error(
        `timed out after ${formatDuration(opts.timeoutMs)} waiting for ${opts.what}${last}${log}`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}
