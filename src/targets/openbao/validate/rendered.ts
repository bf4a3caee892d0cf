/**
 * Rules that live in the config renderer (they need the rendered audit devices and self-init
 * requests) checked with the others, so a bad spec is InvalidSpec naming its field before anything is
 * written, and `validate` says the same offline.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { checkAuditFileStorage, placedAuditDevices } from "../workload/config/audit-storage.js";
import { ConfigError } from "../workload/config/errors.js";
import { listenerTlsPolicy } from "../workload/config/listener-tls.js";
import { DEFAULT_PATHS } from "../workload/config/options.js";
import { recoveryKeysBlock } from "../workload/config/recovery-keys.js";

type Obj = Record<string, unknown>;

/** `runningVersion`: status.currentVersion where known (admission of an update), for rules about the running release. */
export function checkRenderedRules(
  spec: Obj,
  add: (field: string, message: string) => void,
  runningVersion?: string,
): void {
  const cluster = { metadata: { name: "cluster" }, spec } as unknown as OpenBaoCluster;
  const checks: (() => unknown)[] = [];
  if (spec["auditFileStorage"])
    checks.push(() => checkAuditFileStorage(cluster, placedAuditDevices(cluster), DEFAULT_PATHS.dataDir));
  if ((spec["recoveryKeys"] as Obj | undefined)?.["initial"]) checks.push(() => recoveryKeysBlock(cluster));
  const configuration = spec["configuration"] as Obj | undefined;
  if (configuration?.["listener"]) checks.push(() => listenerTlsPolicy(spec as never, runningVersion));
  for (const check of checks) {
    try {
      check();
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      add(`spec.${e.field}`, e.problem);
    }
  }
}
