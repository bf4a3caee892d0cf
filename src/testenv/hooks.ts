import { constants } from "node:os";

// Processes go before files: a server still running could write into a folder being removed.
export type CleanupPhase = "processes" | "files";
const cleanups: Record<CleanupPhase, Array<() => void>> = { processes: [], files: [] };
let installed = false;
let signalsHandedOver = false;

/**
 * For a long-running caller (the local default) that stops its servers itself, in order, on
 * SIGINT/SIGTERM: signals then no longer kill children at once. The exit hook still does, as a net.
 */
export function handOverSignals(): void {
  signalsHandedOver = true;
}

/**
 * Registers synchronous cleanup run however this process ends: normal exit, uncaught error, SIGINT,
 * SIGTERM, SIGHUP, or its parent dying. Exit hooks cannot await, so cleanup must be synchronous.
 */
export function onProcessEnd(phase: CleanupPhase, cleanup: () => void): void {
  cleanups[phase].push(cleanup);
  install();
}

function runCleanups(): void {
  for (const cleanup of [...cleanups.processes, ...cleanups.files]) {
    try {
      cleanup();
    } catch {
      // One failed cleanup must not keep the others from running.
    }
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on("exit", runCleanups);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      if (signalsHandedOver) return;
      runCleanups();
      // Listening to a signal cancels Node's default exit; restore it unless someone else decides.
      if (process.listenerCount(signal) === 1) process.exit(128 + constants.signals[signal]);
    });
  }
  // A parent that died (even by SIGKILL) reparents us; nobody reads our results any more.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) {
      runCleanups();
      process.exit(1);
    }
  }, 1000).unref();
}
