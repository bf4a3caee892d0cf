/**
 * spec.auditFileStorage's rules, which only the renderer can check (the schema checks the claim's
 * own fields): where the claim is mounted, and that every file audit device writes on it. A file
 * device writing beside the claim would write into the pod's own filesystem, which is what the claim
 * is there to avoid.
 */
import { posix } from "node:path";
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { auditOptions, type PlacedAuditDevice } from "./audit.js";
import { ConfigError } from "./errors.js";
import { selfInitAuditDevices } from "./selfinit.js";
import { type AuditDeviceView, specView } from "./spec-view.js";
import { objectList } from "./values.js";

/** Upstream's default mount of the audit claim. */
export const AUDIT_MOUNT_PATH = "/openbao/audit";

/** OpenBao's file audit device writes here without a file of its own. */
const NOT_A_FILE = new Set(["stdout", "discard"]);

const within = (path: string, folder: string): boolean => path === folder || path.startsWith(`${folder}/`);

/** The audit claim's mount in the pods: auditFileStorage.mountPath, cleaned, or upstream's default. */
export function auditMountPath(c: OpenBaoCluster): string | undefined {
  const s = c.spec.auditFileStorage;
  if (!s) return undefined;
  const given = s.mountPath?.trim();
  return given ? posix.normalize(given).replace(/(.)\/+$/, "$1") : AUDIT_MOUNT_PATH;
}

/** Every audit device config.hcl declares: spec.audit, then the self-init requests that enable one. */
export function placedAuditDevices(c: OpenBaoCluster): PlacedAuditDevice[] {
  return [
    ...objectList<AuditDeviceView>(specView(c).audit, "audit").map((device, i) => ({
      device,
      field: `audit[${i}]`,
    })),
    ...selfInitAuditDevices(c),
  ];
}

/** Throws ConfigError naming the field when auditFileStorage cannot hold the file audit devices. */
export function checkAuditFileStorage(
  c: OpenBaoCluster,
  devices: PlacedAuditDevice[],
  dataDir: string,
): void {
  const mount = auditMountPath(c);
  if (!mount) return;
  const field = "auditFileStorage.mountPath";
  if (!posix.isAbsolute(mount) || mount === "/")
    throw new ConfigError(field, "must be an absolute path other than /");
  for (const forbidden of ["/tmp", dataDir])
    if (within(mount, forbidden) || within(forbidden, mount))
      throw new ConfigError(field, `${mount} may not be, contain or lie inside ${forbidden}`);
  for (const { device, field: at } of devices) {
    if (device.type !== "file") continue;
    const file = auditOptions(device, at)["file_path"];
    if (file === undefined || NOT_A_FILE.has(file)) continue;
    if (!posix.isAbsolute(file) || !posix.normalize(file).startsWith(`${mount}/`))
      throw new ConfigError(
        `${at}.fileOptions.filePath`,
        `${file} must be under auditFileStorage.mountPath ${mount} when spec.auditFileStorage is set`,
      );
  }
}
