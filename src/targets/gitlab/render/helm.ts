import { spawn } from "node:child_process";

export interface HelmRunOptions {
  /** Written to helm's standard input (values go this way, so they never touch the disk). */
  stdin?: string;
  signal?: AbortSignal;
}

export interface HelmOutput {
  stdout: string;
  stderr: string;
}

/** helm exited non-zero, timed out or could not start. `detail` is helm's own message, unredacted. */
export class HelmError extends Error {
  constructor(
    message: string,
    readonly detail: string,
    readonly exitCode: number | null,
  ) {
    super(message);
    this.name = "HelmError";
  }
}

export interface HelmRunnerOptions {
  /** Path or name of the binary; default env HELM_BINARY, else `helm` on PATH. */
  binary?: string;
  /** A run taking longer is killed; default 2 minutes (the real GitLab chart renders in seconds). */
  timeoutMs?: number;
  /** Most helm processes at once; more wait their turn, so many resources cannot fork-storm. */
  maxConcurrent?: number;
  /** Largest standard output kept; a chart rendering more fails instead of exhausting memory. */
  maxOutputBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_OUTPUT = 64 * 1024 * 1024;

/**
 * Runs the real `helm` binary. Each runner gives helm private config, cache and data folders and
 * an environment without KUBECONFIG, so a render never reads the user's repositories or plugins and
 * never reaches a cluster: everything it knows about the cluster comes from the flags.
 */
export class HelmRunner {
  readonly binary: string;
  private readonly timeoutMs: number;
  private readonly maxConcurrent: number;
  private readonly maxOutputBytes: number;
  private running = 0;
  /** helm runs by subcommand (template, show, verify), so a test or bench can see a pass ran none. */
  readonly counts = new Map<string, number>();
  private readonly waiting: (() => void)[] = [];

  constructor(opts: HelmRunnerOptions = {}) {
    const fromEnv = process.env["HELM_BINARY"]?.trim();
    this.binary = opts.binary ?? (fromEnv ? fromEnv : "helm");
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxConcurrent = opts.maxConcurrent ?? 2;
    this.maxOutputBytes = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  }

  private environment(): NodeJS.ProcessEnv {
    // template, show and verify write nothing there, and a missing home holds no user repositories
    // or plugins. (Below /dev/null would be surer, but helm fails when its registry config path
    // is not a directory, even when it only warns that the file is missing.)
    const home = "/nonexistent/platform-operator-helm";
    return {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: home,
      HELM_CONFIG_HOME: `${home}/config`,
      HELM_CACHE_HOME: `${home}/cache`,
      HELM_DATA_HOME: `${home}/data`,
    };
  }

  /** Runs `helm <args>`; a non-zero exit is a {@link HelmError} carrying helm's stderr as detail. */
  async run(args: string[], opts: HelmRunOptions = {}): Promise<HelmOutput> {
    this.counts.set(args[0] ?? "", (this.counts.get(args[0] ?? "") ?? 0) + 1);
    await this.acquire();
    try {
      return await this.spawnOnce(args, opts);
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.running < this.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private spawnOnce(args: string[], opts: HelmRunOptions): Promise<HelmOutput> {
    const what = `helm ${args[0] ?? ""}`.trim();
    return new Promise((resolve, reject) => {
      if (opts.signal?.aborted) {
        reject(new HelmError(`${what} was cancelled`, "", null));
        return;
      }
      const child = spawn(this.binary, args, {
        env: this.environment(),
        stdio: ["pipe", "pipe", "pipe"],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outBytes = 0;
      let errBytes = 0;
      let failure: string | undefined;
      const stop = (why: string) => {
        failure ??= why;
        child.kill("SIGKILL");
      };
      const timer = setTimeout(
        () => stop(`timed out after ${Math.round(this.timeoutMs / 1000)} s`),
        this.timeoutMs,
      );
      const onAbort = () => stop("was cancelled");
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      child.stdout.on("data", (b: Buffer) => {
        outBytes += b.length;
        if (outBytes > this.maxOutputBytes) stop(`printed more than ${this.maxOutputBytes} bytes`);
        else out.push(b);
      });
      child.stderr.on("data", (b: Buffer) => {
        // Only the end of stderr matters for the message; keep it bounded too.
        errBytes += b.length;
        err.push(b);
        while (errBytes > 256 * 1024 && err.length > 1) errBytes -= err.shift()!.length;
      });
      const finish = () => {
        clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
      };
      child.once("error", (e) => {
        finish();
        reject(
          new HelmError(
            `cannot run ${this.binary} (set HELM_BINARY to the helm binary): ${e.message}`,
            "",
            null,
          ),
        );
      });
      child.once("close", (code) => {
        finish();
        const stdout = Buffer.concat(out).toString("utf8");
        const stderr = Buffer.concat(err).toString("utf8");
        if (failure) reject(new HelmError(`${what} ${failure}`, stderr, code));
        else if (code !== 0) reject(new HelmError(`${what} failed (exit ${code})`, stderr, code));
        else resolve({ stdout, stderr });
      });
      child.stdin.on("error", () => {});
      child.stdin.end(opts.stdin ?? "");
    });
  }
}
