import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { trackChild } from "../../src/testenv/processes.js";

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));

/**
 * The operator under test as its own process (`platform-operator run`), talking to the API server
 * through `kubeServer` (a WriteProxy). `section` is the YAML of its targets (indented two spaces).
 * Leader election is off: a killed operator's successor would otherwise wait out the Lease, which
 * adds time to every crash point and tests nothing about the lifecycle.
 */
export class OperatorProcess {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private out = "";
  /** How many processes were started (1 + restarts). */
  starts = 0;

  constructor(
    private readonly dir: string,
    private readonly kubeServer: string,
    private readonly section: string,
    /** Added to the harness's environment (the gitlab target reads where its charts are from it). */
    private readonly env: Record<string, string> = {},
    /**
     * Turns the command into the one to spawn: the node's `inCluster`, so the operator reaches pods
     * by their cluster names as an in-cluster one does. Every step of that prefix execs the next,
     * so the spawned pid is the operator itself and SIGKILL reaches it.
     */
    private readonly wrap: (argv: string[]) => string[] = (argv) => argv,
    /** Node's own flags before the operator's script (`--import` of bao-writes-preload). */
    private readonly nodeArgs: string[] = [],
  ) {}

  start(): void {
    const kubeconfig = join(this.dir, "kubeconfig.json");
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "proxy", cluster: { server: this.kubeServer } }],
        contexts: [{ name: "proxy", context: { cluster: "proxy" } }],
        "current-context": "proxy",
      }),
      { mode: 0o600 },
    );
    const config = join(this.dir, "operator.yaml");
    writeFileSync(
      config,
      `leaderElection: { enabled: false }
probes: { port: 0, host: 127.0.0.1 }
logLevel: info
targets:
${this.section}`,
    );
    const [cmd, ...args] = this.wrap([
      process.execPath,
      ...this.nodeArgs,
      MAIN,
      "run",
      "--config",
      config,
      "--kubeconfig",
      kubeconfig,
    ]);
    const child = spawn(cmd!, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...this.env },
    });
    trackChild(child, "operator under faults");
    // FAULTS_OPERATOR_LOG=<dir>: every process's whole output kept, one file per run, for what a
    // run that survived still did wrong (a write OpenBao refused says why only in the log).
    const logDir = process.env["FAULTS_OPERATOR_LOG"];
    const logFile = logDir && join(logDir, `${basename(this.dir)}.log`);
    const keep = (c: Buffer) => {
      // Only the tail matters when a run fails: the last 64 KiB.
      this.out = (this.out + c.toString("utf8")).slice(-65_536);
      if (logFile) appendFileSync(logFile, c);
    };
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    this.exited = new Promise<void>((r) => child.once("exit", () => r()));
    this.child = child;
    this.starts++;
  }

  /** Whether the current process is still running. */
  alive(): boolean {
    const c = this.child;
    return !!c && c.exitCode === null && c.signalCode === null;
  }

  /** SIGKILL now, synchronously: no shutdown, nothing in flight finishes. */
  killNow(): void {
    const c = this.child;
    if (c && c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  }

  /** Kills the process and starts a fresh one once it is gone. */
  async restart(): Promise<void> {
    this.killNow();
    await this.exited;
    this.start();
  }

  /** What the current and earlier processes printed last (for a failed run's report). */
  tail(): string {
    return this.out;
  }

  async stop(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.kill("SIGTERM");
    const timer = new Promise<void>((r) => setTimeout(r, 20_000).unref());
    await Promise.race([this.exited, timer]);
    this.killNow();
    await this.exited;
  }
}
