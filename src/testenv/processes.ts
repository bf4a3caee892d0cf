import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { onProcessEnd } from "./hooks.js";

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  readonly exited: Promise<ExitInfo>;
  isRunning(): boolean;
  /** SIGTERM to the whole process group, SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  tail(lines?: number): Promise<string>;
}

export interface ServiceOptions {
  name: string;
  command: string;
  args: string[];
  logPath: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

// Services are killed by process group with SIGKILL; a tracked helper (a test runner) gets the signal
// it was registered with, so it can still clean up after itself.
const live = new Map<number, { name: string; signal: NodeJS.Signals }>();
let hooksInstalled = false;

// setpriv asks the kernel to SIGKILL the child when this process dies, which covers the one case no
// JavaScript hook can: this process being SIGKILLed itself.
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p));

/** Starts a long-running child with its output in a log file, tracked so it cannot outlive us. */
export async function startService(opts: ServiceOptions): Promise<ServiceProcess> {
  installHooks();
  const fd = openSync(opts.logPath, "a");
  const [command, args] = SETPRIV
    ? [SETPRIV, ["--pdeathsig", "KILL", "--", opts.command, ...opts.args]]
    : [opts.command, opts.args];
  let child: ChildProcess;
  try {
    // A group of its own, so stopping it also stops anything it forked.
    child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ["ignore", fd, fd],
      detached: true,
    });
  } finally {
    closeSync(fd);
  }
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  const pid = child.pid!;
  live.set(pid, { name: opts.name, signal: "SIGKILL" });
  let running = true;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once("exit", (code, signal) => {
      running = false;
      live.delete(pid);
      resolve({ code, signal });
    });
  });
  // Tests that forget stop() must not hang the test process; the exit hook still kills the child.
  child.unref();

  return {
    name: opts.name,
    pid,
    logPath: opts.logPath,
    exited,
    isRunning: () => running,
    async stop(graceMs = 5000) {
      if (!running) return;
      signalGroup(pid, "SIGTERM");
      const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
      // The child is unref'd: once the SIGKILL timer has fired, nothing would keep this process
      // alive until the exit is noticed, and it would end in the middle of the caller's await (a
      // test run stopping its control plane ended there, with exit code 0 and no summary).
      const alive = setInterval(() => {}, 1000);
      await exited;
      clearInterval(alive);
      clearTimeout(timer);
      // Grandchildren ignoring SIGTERM must not keep ports bound after stop() returns.
      signalGroup(pid, "SIGKILL");
    },
    tail: (lines = 40) => tailFile(opts.logPath, lines),
  };
}

/** Awaits a readiness check, stopping the service if it never gets ready so nothing half-started lingers. */
export async function stopIfFailing<T>(service: ServiceProcess, ready: Promise<T>): Promise<T> {
  try {
    return await ready;
  } catch (err) {
    await service.stop();
    throw err;
  }
}

/** Tracks a child that is not a service (a build, a test runner) so the exit hooks kill it too. */
export function trackChild(child: ChildProcess, name: string, signal: NodeJS.Signals = "SIGKILL"): void {
  installHooks();
  const pid = child.pid;
  if (pid === undefined) return;
  live.set(pid, { name, signal });
  child.once("exit", () => live.delete(pid));
}

export function liveChildren(): Array<{ pid: number; name: string }> {
  return [...live].map(([pid, { name }]) => ({ pid, name }));
}

export async function tailFile(path: string, lines: number): Promise<string> {
  try {
    const text = await readFile(path, "utf8");
    return text
      .split("\n")
      .slice(-lines - 1)
      .join("\n");
  } catch {
    return "(no log)";
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

function killEverythingNow(): void {
  for (const [pid, { signal }] of live) signalGroup(pid, signal);
  live.clear();
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  // Only synchronous work is possible at exit, hence SIGKILL rather than a graceful stop.
  onProcessEnd("processes", killEverythingNow);
}
