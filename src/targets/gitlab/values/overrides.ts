// The third values layer, which wins over everything: what the operator never lets a release install.
// cert-manager, the Runner, the ingress controllers and Envoy Gateway are cluster-wide components an
// administrator provisions, and installing them would need definitions and RBAC the operator never
// applies (spec 001, "The reconciler installs no definitions and no RBAC").
import { isMap, setOwn, type Values, valueAt } from "./merge.js";

export function operatorOverrides(): Values {
  return {
    installCertmanager: false,
    "gitlab-runner": { install: false },
    "nginx-ingress": { enabled: false },
    haproxy: { install: false },
    traefik: { install: false },
    global: { gatewayApi: { installEnvoy: false } },
  };
}

/** The chart value that renders the batched background migrations wait Job (charts that have one). */
export const WAIT_JOB_VALUE = [
  "gitlab",
  "migrations",
  "batchedBackgroundMigrationsCheck",
  "enabled",
] as const;

/**
 * The values with the chart's batched background migrations wait Job turned on for an upgrade step
 * and off for every other render (an install, a pass over the deployed version), whatever the
 * other layers say: the Job only means something while an upgrade waits on it (GitLab's operator
 * enables it only while upgrading). Off is written only over a value some layer set. A new map on
 * each level of the path; the input is not changed.
 */
export function withWaitJob(values: unknown, enabled: boolean): unknown {
  // Off and set nowhere: nothing to add (a chart that does not know the key never sees it).
  if (!enabled && !(isMap(values) && valueAt(values, WAIT_JOB_VALUE.join(".")) !== undefined)) return values;
  const set = (at: unknown, depth: number): Values => {
    const copy: Values = isMap(at) ? { ...at } : {};
    const key = WAIT_JOB_VALUE[depth]!;
    setOwn(copy, key, depth === WAIT_JOB_VALUE.length - 1 ? enabled : set(copy[key], depth + 1));
    return copy;
  };
  return set(values, 0);
}
