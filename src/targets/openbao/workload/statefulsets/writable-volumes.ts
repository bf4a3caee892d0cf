import { posix } from "node:path";
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { auditOptions } from "../config/audit.js";
import { DEFAULT_PATHS } from "../config/options.js";
import { pluginDirectoryWanted } from "../config/settings.js";
import type { AuditDeviceView, SpecView } from "../config/spec-view.js";

type Obj = Record<string, unknown>;

/** OpenBao's file audit device writes here without a file of its own. */
const NOT_A_FILE = new Set(["stdout", "discard"]);

/**
 * A writable emptyDir for every folder the rendered config makes OpenBao write into: file audit
 * devices (spec.audit or a self-init request), the log file and the pid file
 * (configuration.logging.file, .pidFile) and the plugin directory. OpenBao runs as a non-root user
 * that cannot create folders in the image: it exits at start when the log or pid file cannot be opened
 * or the plugin directory is missing, and an audit device that cannot open its file fails the very
 * `sys/init` that enables it (after the barrier is initialized, so the root token is lost). An
 * emptyDir is enough for each: logs also go to stdout, plugins are downloaded again at start, and
 * nothing there is data that must outlive the pod (that is on the data volume, `writable`, whose
 * folders need nothing). A folder that is an ancestor of, or inside, one of the pod's other mounts
 * (`protectedPaths`) gets no volume: mounting there would hide the image or a read-only mount, and
 * OpenBao then reports the unwritable path itself.
 */
export function writableVolumes(
  c: OpenBaoCluster,
  writable: string,
  protectedPaths: string[],
): { volumes: Obj[]; mounts: Obj[] } {
  const wanted = (dir: string): boolean =>
    !within(dir, writable) && dir !== "/" && !protectedPaths.some((p) => within(dir, p) || within(p, dir));
  // Audit folders keep the names they always had, so existing pod templates do not change.
  const audit = [...new Set(auditFiles(c).map(folderOf))].filter(wanted).sort();
  const logging = c.spec.configuration?.logging;
  const files = [
    ...new Set(
      [logging?.file, logging?.pidFile]
        .filter((f): f is string => typeof f === "string" && posix.isAbsolute(f))
        .map(folderOf),
    ),
  ]
    .filter((dir) => wanted(dir) && !audit.includes(dir))
    .sort();
  const plugins = pluginDirectoryWanted(c.spec as unknown as SpecView) ? [DEFAULT_PATHS.pluginDir] : [];
  const named = [
    ...audit.map((dir, i) => ({ name: `audit-${i}`, dir })),
    ...files.map((dir, i) => ({ name: `files-${i}`, dir })),
    ...plugins
      .filter((dir) => wanted(dir) && !audit.includes(dir) && !files.includes(dir))
      .map((dir) => ({ name: "plugins", dir })),
  ];
  return {
    volumes: named.map(({ name }) => ({ name, emptyDir: {} })),
    mounts: named.map(({ name, dir }) => ({ name, mountPath: dir })),
  };
}

function auditFiles(c: OpenBaoCluster): string[] {
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
  const files: string[] = [];
  for (const { device, field } of devices) {
    if (device.type !== "file") continue;
    let file: string | undefined;
    try {
      file = auditOptions(device, field)["file_path"];
    } catch {
      continue; // the config renderer refuses the same device, naming the field
    }
    if (file && !NOT_A_FILE.has(file) && posix.isAbsolute(file)) files.push(file);
  }
  return files;
}

const folderOf = (file: string): string => posix.dirname(posix.normalize(file));

function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
}
