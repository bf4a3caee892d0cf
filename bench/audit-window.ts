import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

// What a quiet window shows besides the operator's own metrics: the requests the node's API server
// logged for it (its audit log, JSON lines) and the operator's log lines at warn or above. The proof
// of a quiet operator is "0 warn lines and only re-watches".

/** One request per audit ID (a watch logs ResponseStarted and, when it ends, ResponseComplete). */
export function requestsInWindow(
  lines: Iterable<string>,
  who: { user: string; userAgentPrefix: string },
  fromMs: number,
  toMs: number,
): Record<string, number> {
  const seen = new Set<string>();
  const out: Record<string, number> = {};
  for (const line of lines) {
    if (!line.trim()) continue;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue; // a line cut by rotation or by a write still under way
    }
    if (e.user?.username !== who.user || !e.userAgent?.startsWith(who.userAgentPrefix)) continue;
    const at = Date.parse(e.requestReceivedTimestamp ?? "");
    if (!(at >= fromMs && at < toMs) || !e.auditID || seen.has(e.auditID)) continue;
    seen.add(e.auditID);
    const key = `${e.verb} ${what(e)}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

interface AuditEvent {
  auditID?: string;
  verb?: string;
  requestURI?: string;
  userAgent?: string;
  requestReceivedTimestamp?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string };
}

/** "pods", "openbaoclusters/status", or the path of a non-resource request ("/api"). */
function what(e: AuditEvent): string {
  const r = e.objectRef?.resource;
  if (r) return e.objectRef?.subresource ? `${r}/${e.objectRef.subresource}` : r;
  return (e.requestURI ?? "?").split("?")[0]!;
}

/** The audit log's lines, its rotated backups (audit-<time>.log) first. */
export function auditLines(logPath: string): string[] {
  const dir = join(logPath, "..");
  const files = readdirSync(dir)
    .filter((f) => /^audit-.*\.log$/.test(f))
    .sort()
    .map((f) => join(dir, f));
  return [...files, logPath].flatMap((f) => readFileSync(f, "utf8").split("\n"));
}

const WARN_LEVELS = new Set(["warn", "error", "fatal"]);

/**
 * The lines at warn or above in a slice of the operator's output: JSON lines by their level (a
 * label, or pino's number from 40), any other non-empty line too (unstructured output is a warning
 * of some sort: node's own, a crash). Only the messages are kept, never the other fields.
 */
export function warnLines(output: string): string[] {
  const out: string[] = [];
  for (const line of output.split("\n")) {
    if (!line.trim()) continue;
    let e: { level?: unknown; msg?: unknown };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      out.push(`(not JSON) ${line.slice(0, 120)}`);
      continue;
    }
    const level = e.level;
    if ((typeof level === "string" && WARN_LEVELS.has(level)) || (typeof level === "number" && level >= 40))
      out.push(`${String(level)}: ${typeof e.msg === "string" ? e.msg : "(no msg)"}`);
  }
  return out;
}

/** "watch pods ×3, get leases ×1"; and whether every request was a watch. */
export function describeRequests(counts: Record<string, number>): { listed: string; onlyWatches: boolean } {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return {
    listed: entries.map(([k, v]) => `${k} ×${v}`).join(", ") || "none",
    onlyWatches: entries.every(([k]) => k.startsWith("watch ")),
  };
}
