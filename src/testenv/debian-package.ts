import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exists, populateAtomically } from "./atomic.js";
import { cacheRoot } from "./cache.js";
import { formatDuration } from "./duration.js";
import { runCommand } from "./exec.js";

// A program taken from one pinned Debian package, not from the machine's own release: the .deb is
// fetched from the Debian mirror this machine's apt uses (by its pool path, the same file on every
// mirror), checked against the SHA-256 the release's Packages index gives for it, and unpacked with
// `dpkg-deb -x` into the cache. Nothing is installed; no maintainer script runs.

export interface DebianProgram {
  /** The package name, e.g. "cosign". */
  package: string;
  /** The package version, e.g. "2.5.0-2+b5" (names the cache entry). */
  version: string;
  /** The Debian release whose archive holds it, e.g. "trixie" (for the docs and errors). */
  release: string;
  /** `Filename:` in the release's Packages index: pool/main/c/cosign/cosign_2.5.0-2+b5_amd64.deb. */
  pool: string;
  /** `SHA256:` of the .deb in the same index. */
  sha256: string;
  /** The program inside the package, e.g. "usr/bin/cosign". */
  binary: string;
}

const DEFAULT_MIRROR = "http://deb.debian.org/debian";

/**
 * The Debian archive this machine's apt reads (its sources' first URI ending in /debian), so the
 * fetch goes where apt-get would go; PLATFORM_OPERATOR_DEBIAN_MIRROR overrides it.
 */
export function debianMirror(): string {
  const fromEnv = process.env["PLATFORM_OPERATOR_DEBIAN_MIRROR"]?.trim();
  if (fromEnv) return fromEnv.replace(/\/+$/, "");
  const files = ["/etc/apt/sources.list"];
  try {
    for (const f of readdirSync("/etc/apt/sources.list.d").sort()) files.push(`/etc/apt/sources.list.d/${f}`);
  } catch {
    // No sources.list.d: the main file alone, or the default.
  }
  const texts = files.map((file) => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "";
    }
  });
  return mirrorInSources(texts) ?? DEFAULT_MIRROR;
}

/** The first Debian archive URI in apt source files, one-line ("deb [opts] URI ...") or deb822 ("URIs:"). */
export function mirrorInSources(texts: string[]): string | undefined {
  for (const text of texts) {
    for (const line of text.split("\n")) {
      if (/^\s*#/.test(line)) continue;
      const uris =
        /^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)/.exec(line)?.[1] ?? /^\s*URIs:\s*(.+)$/i.exec(line)?.[1] ?? "";
      for (const uri of uris.trim().split(/\s+/))
        if (/^https?:\/\/.+\/debian\/?$/.test(uri)) return uri.replace(/\/+$/, "");
    }
  }
  return undefined;
}

export function debianProgramDir(p: DebianProgram): string {
  return join(cacheRoot(), `${p.package}-${p.version}`);
}

/** The unpacked program's path, fetching and unpacking its package once (concurrent runs take turns). */
export async function ensureDebianProgram(
  p: DebianProgram,
  onProgress: (line: string) => void = () => {},
): Promise<string> {
  const dir = debianProgramDir(p);
  const binary = join(dir, "root", p.binary);
  if (await exists(binary)) return binary;
  const url = `${debianMirror()}/${p.pool}`;
  await populateAtomically(
    dir,
    async (scratch) => {
      onProgress(`fetching ${p.package} ${p.version} (Debian ${p.release}) from ${url}`);
      const started = Date.now();
      const res = await fetch(url, { signal: AbortSignal.timeout(300_000) });
      if (!res.ok) {
        throw new Error(
          `${url}: HTTP ${res.status}; the pinned ${p.package} ${p.version} may have left Debian ${p.release}: ` +
            `pin the current one (apt-cache show ${p.package} with a ${p.release} source gives Filename and SHA256)`,
        );
      }
      const deb = Buffer.from(await res.arrayBuffer());
      const digest = createHash("sha256").update(deb).digest("hex");
      if (digest !== p.sha256) {
        throw new Error(`${url}: SHA-256 ${digest}, expected ${p.sha256}: refusing to unpack it`);
      }
      const file = join(scratch, `${p.package}.deb`);
      writeFileSync(file, deb);
      await runCommand("dpkg-deb", ["-x", file, join(scratch, "root")]);
      if (!existsSync(join(scratch, "root", p.binary))) throw new Error(`${url} holds no ${p.binary}`);
      // Where it came from, for whoever wonders; the package's copyright stays in root/usr/share/doc.
      writeFileSync(join(scratch, "source"), `${url}\nsha256:${p.sha256}\n`);
      rmSync(file);
      onProgress(`unpacked ${p.package} ${p.version} in ${formatDuration(Date.now() - started)}`);
    },
    { onWait: (pid) => onProgress(`waiting for process ${pid}, which is fetching ${p.package}`) },
  );
  return binary;
}
