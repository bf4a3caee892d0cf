/**
 * Offline checks of spec.network's address lists and spec.observability.metrics: what the schema
 * takes as plain strings but a NetworkPolicy or OpenBao's listener cannot use. Pure.
 */
import { isIP } from "node:net";
import type { OpenBaoClusterSpec } from "../../../apis/openbaocluster.js";
import { ConfigError } from "../workload/config/errors.js";
import { metricsSettings } from "../workload/config/metrics.js";

type Obj = Record<string, unknown>;
type Add = (field: string, message: string) => void;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Address lists whose entries become /32 or /128 ipBlocks of the managed NetworkPolicy. */
const ADDRESS_LISTS = ["apiServerEndpointIPs", "dnsEndpointIPs"] as const;

export function checkNetwork(spec: Obj, add: Add): void {
  const net = spec["network"];
  if (!isObject(net)) return;
  for (const list of ADDRESS_LISTS) {
    const ips = net[list];
    if (!Array.isArray(ips)) continue;
    ips.forEach((ip, i) => {
      if (typeof ip !== "string" || isIP(ip) === 0)
        add(`spec.network.${list}[${i}]`, `${JSON.stringify(ip)} is not an IP address`);
    });
  }
}

export function checkMetrics(spec: Obj, add: Add): void {
  try {
    metricsSettings(spec as Partial<OpenBaoClusterSpec>);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    add(`spec.${e.field}`, e.problem);
  }
}
