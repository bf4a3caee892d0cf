import { posix } from "node:path";
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { auditOptions } from "../config/audit.js";
import type { AuditDeviceView } from "../config/spec-view.js";

type Obj = Record<string, unknown>;

/** OpenBao's file audit device writes here without a file of its own. */
const NOT_A_FILE = new Set(["stdout", "discard"]);

/**
 * A writable emptyDir for every folder a file audit device writes into, declared in spec.audit or
 * enabled by a self-init request. OpenBao runs as a non-root user that cannot create folders in the
 * image, and an audit device that cannot open its file fails the very `sys/init` that enables it
 * (after OpenBao has initialized its barrier, so the answer with the root token is lost). Folders
 * inside the data volume need nothing; a folder that is an ancestor of, or inside, one of the pod's
 * other mounts (`protected`) gets no volume: mounting there would hide the image or a read-only
 * mount, and OpenBao then reports the unwritable path itself.
 */
export function auditVolumes(
  c: OpenBaoCluster,
  writable: string,
  protectedPaths: string[],
): { volumes: Obj[]; mounts: Obj[] } {
  const dirs = new Set<string>();
  const devices: { device: AuditDeviceView; field: string }[] = [
    ...((c.spec.audit ?? []) as unknown as AuditDeviceView[]).map((device, i) => ({
      device,
      field: `spec.audit[${i}]`,
    })),
    ...((c.spec.selfInit?.requests ?? []) as unknown as { path?: string; auditDevice?: AuditDeviceView }[])
      .filter((r) => r.auditDevice)
      .map((r, i) => ({
        device: { ...(r.auditDevice as AuditDeviceView), path: r.path ?? "" },
        field: `spec.selfInit.requests[${i}].auditDevice`,
      })),
  ];
  for (const { device, field } of devices) {
    if (device.type !== "file") continue;
    let file: string | undefined;
    try {
      file = auditOptions(device, field)["file_path"];
    } catch {
      continue; // the config renderer refuses the same device, naming the field
    }
    if (!file || NOT_A_FILE.has(file) || !posix.isAbsolute(file)) continue;
    const dir = posix.dirname(posix.normalize(file));
    if (within(dir, writable)) continue;
    if (dir === "/" || protectedPaths.some((p) => within(dir, p) || within(p, dir))) continue;
    dirs.add(dir);
  }
  const sorted = [...dirs].sort();
  return {
    volumes: sorted.map((_, i) => ({ name: `audit-${i}`, emptyDir: {} })),
    mounts: sorted.map((dir, i) => ({ name: `audit-${i}`, mountPath: dir })),
  };
}

function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
}
