/**
 * Rules that live in the config renderer (they need the rendered audit devices and self-init
 * requests) checked with the others, so a bad spec is InvalidSpec naming its field before anything is
 * written, and `validate` says the same offline.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { checkAuditFileStorage, placedAuditDevices } from "../workload/config/audit-storage.js";
import { ConfigError } from "../workload/config/errors.js";
import { DEFAULT_PATHS } from "../workload/config/options.js";
import { recoveryKeysBlock } from "../workload/config/recovery-keys.js";

type Obj = Record<string, unknown>;

export function checkRenderedRules(spec: Obj, add: (field: string, message: string) => void): void {
  const cluster = { metadata: { name: "cluster" }, spec } as unknown as OpenBaoCluster;
  const checks: (() => unknown)[] = [];
  if (spec["auditFileStorage"])
    checks.push(() => checkAuditFileStorage(cluster, placedAuditDevices(cluster), DEFAULT_PATHS.dataDir));
  if ((spec["recoveryKeys"] as Obj | undefined)?.["initial"]) checks.push(() => recoveryKeysBlock(cluster));
  for (const check of checks) {
    try {
      check();
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      add(`spec.${e.field}`, e.problem);
    }
  }
}
