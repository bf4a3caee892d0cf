import { readFileSync, statSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";

/** How often, at most, a credential file is checked for a new version. */
export const DEFAULT_CHECK_EVERY_MS = 1000;

/**
 * A credential file that may be replaced while the process runs: kubelet rotates projected
 * ServiceAccount tokens by swapping a symlink, cert-manager rewrites client certificates. The file is
 * read once at start (a missing file is an error then), and afterwards re-read when its inode, size or
 * times change, looked at no more than once per `checkEveryMs`. A file that vanishes or reads empty
 * mid-rotation keeps the last good content instead of breaking every request.
 */
export class WatchedFile {
  private content: Buffer;
  private signature: string;
  private checkedAt: number;
  private pending?: Promise<boolean>;

  constructor(
    readonly path: string,
    /** What the file holds, for errors: "token file", "client certificate"... */
    readonly what: string,
    private readonly checkEveryMs = DEFAULT_CHECK_EVERY_MS,
  ) {
    try {
      this.signature = signatureOf(statSync(path));
      this.content = readFileSync(path);
    } catch (e) {
      throw new Error(`cannot read the ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? e}`);
    }
    if (this.content.length === 0) throw new Error(`the ${what} ${path} is empty`);
    this.checkedAt = Date.now();
  }

  get value(): Buffer {
    return this.content;
  }

  /** Re-reads the file when it changed since the last look; resolves true when the content changed. */
  refresh(): Promise<boolean> {
    if (Date.now() - this.checkedAt < this.checkEveryMs) return Promise.resolve(false);
    this.pending ??= this.check().finally(() => {
      this.pending = undefined;
      this.checkedAt = Date.now();
    });
    return this.pending;
  }

  private async check(): Promise<boolean> {
    try {
      const signature = signatureOf(await stat(this.path));
      if (signature === this.signature) return false;
      const content = await readFile(this.path);
      if (content.length === 0) return false;
      this.signature = signature;
      if (content.equals(this.content)) return false;
      this.content = content;
      return true;
    } catch {
      return false;
    }
  }
}

function signatureOf(s: { ino: number; size: number; mtimeMs: number; ctimeMs: number }): string {
  return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
}
