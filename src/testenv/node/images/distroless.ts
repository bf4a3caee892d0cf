import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { exists, populateAtomically } from "../../atomic.js";
import { cacheRoot } from "../../cache.js";
import { runCommand } from "../../exec.js";
import { dir, textFile } from "./rootfs.js";
import type { TarEntry } from "./tar.js";

// A distroless root in the sense of Google's distroless images: the C and C++ runtime, CA
// certificates, time zones, /etc/services and a non-root user, and nothing that runs a command: no
// shell, no package manager, no coreutils. Every file comes from the Debian packages below, fetched
// with `apt-get download` from the machine's own Debian release and unpacked with `dpkg-deb -x`;
// none of their maintainer scripts runs (the one thing they would produce, the CA bundle, is made here).

/** What Node.js needs (`ldd node`: libc, libm, libdl, libpthread, libstdc++, libgcc_s) and the rest of a base. */
export const DISTROLESS_PACKAGES = [
  "libc6",
  "libgcc-s1",
  "libstdc++6",
  "ca-certificates",
  "tzdata",
  "netbase",
];

export const NONROOT = { name: "nonroot", uid: 65532, gid: 65532, home: "/home/nonroot" } as const;

export interface DebianPackage {
  name: string;
  version: string;
  architecture: string;
}

export interface DistrolessRoot {
  /** Unpacked, trimmed root folder. */
  dir: string;
  packages: DebianPackage[];
}

/** Paths (relative to the root) that are dropped: programs, and what only a package manager or a developer reads. */
const DROPPED = [
  /^(usr\/)?s?bin(\/|$)/,
  /^usr\/share\/(man|info|lintian|gcc|gdb|bug)(\/|$)/,
  /^etc\/ca-certificates\/update\.d(\/|$)/,
  // Documentation goes; each package's copyright (its licence) stays, as distroless keeps it.
  /^usr\/share\/doc\/[^/]+\/(?!copyright$).+/,
];

/** Candidate versions apt would download now, as "name=version" lines (the cache key). */
async function candidates(): Promise<string[]> {
  const out: string[] = [];
  for (const name of DISTROLESS_PACKAGES) {
    const { stdout } = await runCommand("apt-cache", ["show", "--no-all-versions", name]);
    const version = /^Version: (\S+)/m.exec(stdout)?.[1];
    if (!version) throw new Error(`apt-cache knows no version of ${name}: run apt-get update`);
    out.push(`${name}=${version}`);
  }
  return out;
}

/** The distroless root, built once per set of package versions into the cache. */
export async function ensureDistrolessRoot(onProgress: (line: string) => void): Promise<DistrolessRoot> {
  const wanted = await candidates();
  const key = createHash("sha256").update(wanted.join("\n")).digest("hex").slice(0, 12);
  const target = join(cacheRoot(), `distroless-${key}`);
  if (!(await exists(target))) {
    onProgress(`building the distroless base from Debian packages: ${wanted.join(" ")}`);
    await populateAtomically(target, async (scratch) => {
      const debs = join(scratch, "debs");
      const root = join(scratch, "root");
      mkdirSync(debs);
      mkdirSync(root);
      // apt drops privileges to _apt for downloads; a scratch folder it cannot write is fine as root.
      try {
        await runCommand("apt-get", ["download", ...wanted], { cwd: debs });
      } catch {
        // A fresh machine may know installed packages but no place to download them from yet.
        onProgress("apt-get download failed; refreshing the package lists once (apt-get update)");
        await runCommand("apt-get", ["update"]);
        await runCommand("apt-get", ["download", ...wanted], { cwd: debs });
      }
      const packages: DebianPackage[] = [];
      const status = join(root, "var/lib/dpkg/status.d");
      mkdirSync(status, { recursive: true });
      for (const file of readdirSync(debs)
        .filter((f) => f.endsWith(".deb"))
        .sort()) {
        const deb = join(debs, file);
        await runCommand("dpkg-deb", ["-x", deb, root]);
        const control = (await runCommand("dpkg-deb", ["-f", deb])).stdout;
        const field = (f: string) => new RegExp(`^${f}: (.+)$`, "m").exec(control)?.[1]?.trim() ?? "";
        packages.push({
          name: field("Package"),
          version: field("Version"),
          architecture: field("Architecture"),
        });
        // Where distroless records its packages, so image scanners find them without a dpkg database.
        writeFileSync(join(status, field("Package")), control);
      }
      trim(root);
      writeFileSync(join(root, "etc/ssl/certs/ca-certificates.crt"), caBundle(root));
      writeFileSync(join(scratch, "packages.json"), JSON.stringify(packages, null, 2));
      rmSync(debs, { recursive: true, force: true });
    });
  }
  return {
    dir: join(target, "root"),
    packages: JSON.parse(readFileSync(join(target, "packages.json"), "utf8")) as DebianPackage[],
  };
}

function trim(root: string): void {
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      const rel = relative(root, path);
      const asMatched = e.isDirectory() ? `${rel}/` : rel;
      if (DROPPED.some((re) => re.test(asMatched))) {
        rmSync(path, { recursive: true, force: true });
        continue;
      }
      if (e.isDirectory()) walk(path);
    }
  };
  walk(root);
}

/** What update-ca-certificates writes: every certificate the package ships, in name order. */
function caBundle(root: string): string {
  const dirPath = join(root, "usr/share/ca-certificates/mozilla");
  const certs = readdirSync(dirPath)
    .filter((f) => f.endsWith(".crt"))
    .sort();
  if (certs.length === 0) throw new Error(`${dirPath} holds no certificates`);
  mkdirSync(join(root, "etc/ssl/certs"), { recursive: true });
  return certs.map((f) => readFileSync(join(dirPath, f), "utf8").trimEnd()).join("\n") + "\n";
}

/**
 * The image entries of the root: the unpacked packages, /etc/passwd and /etc/group with root, nonroot
 * (65532) and nobody, all with /sbin/nologin, which does not exist: there is no shell to log in to.
 */
export function distrolessEntries(root: DistrolessRoot, binaryNeedingLibs?: string): TarEntry[] {
  if (binaryNeedingLibs) assertLibrariesPresent(root.dir, binaryNeedingLibs);
  const entries: TarEntry[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(d, e.name);
      const inImage = `/${relative(root.dir, path)}`;
      const st = lstatSync(path);
      if (st.isSymbolicLink()) entries.push({ type: "symlink", path: inImage, target: readlinkSync(path) });
      else if (st.isDirectory()) {
        entries.push(dir(inImage, st.mode & 0o7777));
        walk(path);
      } else if (st.isFile())
        entries.push({ type: "file", path: inImage, mode: st.mode & 0o7777, source: path, size: st.size });
    }
  };
  walk(root.dir);
  const users = [
    { name: "root", uid: 0, gid: 0, home: "/root" },
    NONROOT,
    { name: "nobody", uid: 65534, gid: 65534, home: "/nonexistent" },
  ];
  const passwd = users.map((u) => `${u.name}:x:${u.uid}:${u.gid}:${u.name}:${u.home}:/sbin/nologin`);
  const group = users.map((u) => `${u.name === "nobody" ? "nogroup" : u.name}:x:${u.gid}:`);
  const have = new Set(entries.map((e) => e.path));
  for (const d of ["/etc", "/home", "/root", "/usr", "/usr/local", "/usr/local/bin", "/var"])
    if (!have.has(d)) entries.push(dir(d, d === "/root" ? 0o700 : 0o755));
  entries.push(
    dir("/tmp", 0o1777),
    dir(NONROOT.home, 0o700, NONROOT),
    textFile("/etc/passwd", `${passwd.join("\n")}\n`),
    textFile("/etc/group", `${group.join("\n")}\n`),
    textFile("/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n"),
  );
  if (existsSync("/usr/lib/os-release"))
    entries.push(textFile("/etc/os-release", readFileSync("/usr/lib/os-release", "utf8")));
  return entries;
}

/** Fails when `binary` needs a shared library (by `ldd`'s file name) that the root does not hold. */
function assertLibrariesPresent(root: string, binary: string): void {
  const out = execFileSync("ldd", [binary], { encoding: "utf8" });
  const missing: string[] = [];
  for (const m of out.matchAll(/(?:^|\s)(\/\S+)\s+\(0x/gm)) {
    const host = m[1]!;
    const name = host.split("/").pop()!;
    const found = ["lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64"].some((d) =>
      existsSync(join(root, d, name)),
    );
    if (!found) missing.push(host);
  }
  if (missing.length > 0)
    throw new Error(`the distroless base lacks libraries ${binary} needs: ${missing.join(", ")}`);
}
