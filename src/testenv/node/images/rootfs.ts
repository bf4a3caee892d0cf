import { execFileSync } from "node:child_process";
import { realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";
import type { TarEntry } from "./tar.js";

export const BUSYBOX = "/bin/busybox"; // Debian's busybox-static

export interface ImageUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

export const ROOT: ImageUser = { name: "root", uid: 0, gid: 0, home: "/root" };
export const NOBODY: ImageUser = { name: "nobody", uid: 65534, gid: 65534, home: "/nonexistent" };

/** A host file copied into the image. */
export function hostFile(
  path: string,
  source: string,
  mode = 0o755,
  owner?: { uid: number; gid: number },
): TarEntry {
  const real = realpathSync(source);
  return { type: "file", path, mode, source: real, size: statSync(real).size, ...owner };
}

export function textFile(path: string, text: string, mode = 0o644): TarEntry {
  return { type: "file", path, mode, data: Buffer.from(text, "utf8") };
}

export function dir(path: string, mode = 0o755, owner?: { uid: number; gid: number }): TarEntry {
  return { type: "dir", path, mode, ...owner };
}

/**
 * The smallest useful root: directories, /etc/passwd and /etc/group for the given users, a world-
 * writable /tmp, and busybox with a link per applet so the image has a shell and the usual tools.
 */
export function baseLayer(users: ImageUser[] = []): TarEntry[] {
  const all = [ROOT, ...users, NOBODY];
  const passwd = all.map((u) => `${u.name}:x:${u.uid}:${u.gid}:${u.name}:${u.home}:/bin/sh`).join("\n");
  const groups = new Map(all.map((u) => [u.gid, u.name === "nobody" ? "nogroup" : u.name]));
  const group = [...groups].map(([gid, name]) => `${name}:x:${gid}:`).join("\n");
  const entries: TarEntry[] = [
    ...[
      "/bin",
      "/etc",
      "/root",
      "/usr",
      "/usr/bin",
      "/usr/local",
      "/usr/local/bin",
      "/var",
      "/lib",
      "/lib64",
    ].map((d) => dir(d, d === "/root" ? 0o700 : 0o755)),
    dir("/tmp", 0o1777),
    dir("/var/tmp", 0o1777),
    textFile("/etc/passwd", `${passwd}\n`),
    textFile("/etc/group", `${group}\n`),
    textFile("/etc/nsswitch.conf", "hosts: files dns\n"),
    hostFile("/bin/busybox", BUSYBOX),
  ];
  for (const u of users) if (u.home !== "/nonexistent") entries.push(dir(u.home, 0o755, u));
  for (const applet of busyboxApplets()) {
    if (applet === "busybox") continue;
    entries.push({ type: "symlink", path: `/bin/${applet}`, target: "busybox" });
  }
  return entries;
}

let applets: string[] | undefined;
function busyboxApplets(): string[] {
  if (!applets) {
    applets = execFileSync(BUSYBOX, ["--list"], { encoding: "utf8" })
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /^[a-z0-9_.[-]+$/.test(l) && l !== "[[" && !l.includes("/"));
  }
  return applets;
}

/**
 * The shared libraries a dynamically linked host binary needs (as `ldd` reports them), at the paths
 * the loader looks for them, so the binary runs in an otherwise empty image.
 */
export function sharedLibraries(binary: string): TarEntry[] {
  let out = "";
  try {
    out = execFileSync("ldd", [binary], { encoding: "utf8" });
  } catch {
    return []; // "not a dynamic executable"
  }
  const entries: TarEntry[] = [];
  for (const line of out.split("\n")) {
    const m = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line);
    if (!m) continue;
    const path = m[1]!;
    entries.push(hostFile(path, path, 0o755));
  }
  // The loader's own path (/lib64/ld-linux-x86-64.so.2) is a symlink on Debian; the image gets the file.
  const unique = entries.filter((e, i) => entries.findIndex((o) => o.path === e.path) === i);
  const parents = new Set(unique.map((e) => dirname(e.path)));
  return [...[...parents].sort().map((d) => dir(d)), ...unique];
}
