import { constants } from "node:os";

// Processes go before files: a server still running could write into a folder being removed.
export type CleanupPhase = "processes" | "files";
const cleanups: Record<CleanupPhase, Array<() => void>> = { processes: [], files: [] };
let installed = false;
let signalsHandedOver = false;
let pipeGuarded = false;

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

/**
 * A reader that went away (`npm start | tee log` and Ctrl-C kills tee) makes every later write to
 * stdout or stderr fail with EPIPE. Unhandled, the first one crashes the process in the middle of its
 * shutdown; handled, output is dropped and the cleanup runs to the end. Any other stream error is
 * still fatal.
 */
export function survivePipeLoss(): void {
  if (pipeGuarded) return;
  pipeGuarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE" || err.code === "ERR_STREAM_DESTROYED") return;
      throw err;
    });
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  survivePipeLoss();
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
