import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import type { AutopilotConfig, BaoClient } from "../../baoclient/client.js";

/**
 * Autopilot settings the spec asks for, in OpenBao's field names, over upstream's defaults. The
 * quorum floor follows the profile as upstream's does: Hardened never below 3 (more with more
 * voters), otherwise the voter count (at least 1), so a one-voter Development cluster works. OpenBao
 * refuses dead-server cleanup with a floor under 3, so cleanup is off there whatever
 * `cleanupDeadServers` says: the definition defaults it to true as soon as any Autopilot setting is
 * given, so a `true` there cannot be told from no choice at all, and sending it would be refused on
 * every pass with none of the other settings applied (seen scaling 3 → 1 in the fault campaign). An explicit
 * `minQuorum` is at least 3 (the definition's minimum), so it never meets this.
 */
export function desiredAutopilot(c: Pick<OpenBaoCluster, "spec">): AutopilotConfig {
  const a = c.spec.configuration?.raft?.autopilot ?? {};
  const replicas = c.spec.replicas ?? 3;
  const minQuorum =
    a.minQuorum ?? (c.spec.profile === "Hardened" ? Math.max(3, replicas) : Math.max(1, replicas));
  return {
    cleanup_dead_servers: minQuorum >= 3 && (a.cleanupDeadServers ?? true),
    dead_server_last_contact_threshold: a.deadServerLastContactThreshold ?? "5m",
    last_contact_threshold: a.lastContactThreshold ?? "10s",
    max_trailing_logs: a.maxTrailingLogs ?? 1000,
    min_quorum: minQuorum,
    server_stabilization_time: a.serverStabilizationTime ?? "10s",
  };
}

/** Go durations as OpenBao prints them ("5m0s") compared with the spec's ("5m"). */
export function durationSeconds(v: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  const unit: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  let total = 0;
  let matched = "";
  for (const m of v.matchAll(re)) {
    total += Number(m[1]) * unit[m[2]!]!;
    matched += m[0];
  }
  return matched === v && v !== "" ? total : undefined;
}

/** The keys whose live value differs from the wanted one. Pure. */
export function autopilotDiff(want: AutopilotConfig, live: AutopilotConfig): string[] {
  const diff: string[] = [];
  for (const [k, w] of Object.entries(want)) {
    const l = (live as Record<string, unknown>)[k];
    if (typeof w === "string" && typeof l === "string") {
      const a = durationSeconds(w);
      const b = durationSeconds(l);
      if (a !== undefined && b !== undefined ? a !== b : w !== l) diff.push(k);
    } else if (w !== l) diff.push(k);
  }
  return diff;
}

/** Reads Autopilot's configuration and writes it only when it differs; returns the keys changed. */
export async function reconcileAutopilot(
  bao: BaoClient,
  token: string,
  cluster: OpenBaoCluster,
  dryRun: boolean,
  signal?: AbortSignal,
): Promise<string[]> {
  const want = desiredAutopilot(cluster);
  const live = await bao.autopilotConfig(token, signal);
  const diff = autopilotDiff(want, live);
  if (diff.length > 0 && !dryRun) await bao.setAutopilotConfig(token, want, signal);
  return diff;
}

/**
 * What the Autopilot settings were last found (or made) right under: the cluster's uid, the wanted
 * settings, the active node and the uid of the pod asked (pod 0). A pass whose stamp matches asks
 * OpenBao nothing; a new spec, a new leader, a restarted pod 0 (after a restore the pods restart,
 * and the settings and tokens are the snapshot's) or a new process checks once more.
 */
export function autopilotStamp(c: OpenBaoCluster, askedPodUid = ""): string {
  return `${c.metadata.uid ?? ""}|${JSON.stringify(desiredAutopilot(c))}|${c.status?.activeLeader ?? ""}|${askedPodUid}`;
}

/** Per cluster key, the stamp under which its Autopilot settings were last seen as wanted. */
export class AutopilotChecks {
  private readonly seen = new Map<string, string>();

  current(key: string, stamp: string): boolean {
    return this.seen.get(key) === stamp;
  }

  remember(key: string, stamp: string): void {
    this.seen.set(key, stamp);
  }

  forget(key: string): void {
    this.seen.delete(key);
  }
}
