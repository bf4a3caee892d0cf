import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// kubelet sets these machine-wide at start (they are not per network namespace) and offers no way to
// leave them alone: protectKernelDefaults only turns the change into a start failure.
export const KUBELET_SYSCTLS = [
  "vm/overcommit_memory",
  "vm/panic_on_oom",
  "kernel/panic",
  "kernel/panic_on_oops",
  "kernel/keys/root_maxkeys",
  "kernel/keys/root_maxbytes",
] as const;

const file = (registryDir: string) => join(registryDir, "sysctl-originals.json");

export function readSysctl(key: string): string {
  return readFileSync(`/proc/sys/${key}`, "utf8").trim();
}

/**
 * Saves the values kubelet is about to change, once per machine: a second node starting while the
 * first runs would otherwise record kubelet's values as the originals.
 */
export function recordSysctls(registryDir: string): void {
  const values = Object.fromEntries(KUBELET_SYSCTLS.map((k) => [k, readSysctl(k)]));
  try {
    writeFileSync(file(registryDir), JSON.stringify(values), { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

/** The saved originals, or undefined when no node has changed anything. */
export function savedSysctls(registryDir: string): Record<string, string> | undefined {
  try {
    return JSON.parse(readFileSync(file(registryDir), "utf8")) as Record<string, string>;
  } catch {
    return undefined;
  }
}

/** Writes the originals back and forgets them; called by the last node on this machine to stop. */
export function restoreSysctls(registryDir: string): void {
  const saved = savedSysctls(registryDir);
  if (!saved) return;
  for (const [key, value] of Object.entries(saved)) {
    if (!(KUBELET_SYSCTLS as readonly string[]).includes(key)) continue;
    try {
      writeFileSync(`/proc/sys/${key}`, value);
    } catch {
      // A key this kernel lacks; nothing was changed there either.
    }
  }
  unlinkSync(file(registryDir));
}
