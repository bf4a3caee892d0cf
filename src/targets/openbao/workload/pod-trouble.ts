/**
 * Why an OpenBao pod does not answer, read from the pod's own status: the container waiting in a state
 * that does not cure itself (CrashLoopBackOff, an image that cannot be pulled, a config error) and its
 * last termination (exit code, reason, the tail of its message). The kubelet fills that message from
 * the end of the container's log (terminationMessagePolicy FallbackToLogsOnError), so it is cut to its
 * last lines and anything shaped like a token or key is masked before it reaches a condition or an
 * event. Pure.
 */
import type { KubeObject } from "../../../runtime/types.js";

/** Container states that waiting will not cure. */
export const STUCK_STATES: ReadonlySet<string> = new Set([
  "CrashLoopBackOff",
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
]);

interface Terminated {
  exitCode?: number;
  reason?: string;
  message?: string;
}
interface ContainerStatus {
  name: string;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string }; terminated?: Terminated };
  lastState?: { terminated?: Terminated };
}

export interface PodTrouble {
  /** True when the container is in a state waiting will not cure. */
  stuck: boolean;
  /** One sentence naming the pod, the state and the last exit; no secret values. */
  message: string;
}

const MESSAGE_TAIL = 240;

/** The trouble of `container` in `pod`, or undefined when it runs (or has not started yet). */
export function podTrouble(pod: KubeObject | undefined, container = "openbao"): PodTrouble | undefined {
  if (!pod) return undefined;
  const statuses = ((pod["status"] as { containerStatuses?: ContainerStatus[] } | undefined)
    ?.containerStatuses ?? []) as ContainerStatus[];
  const s = statuses.find((c) => c.name === container);
  if (!s) return undefined;
  const waiting = s.state?.waiting?.reason;
  const last = s.state?.terminated ?? s.lastState?.terminated;
  const stuck = waiting !== undefined && STUCK_STATES.has(waiting);
  if (!stuck && !last) return undefined;
  const parts: string[] = [`pod ${pod.metadata.name}: container ${container}`];
  if (waiting) parts.push(`is in ${waiting}`);
  if (s.restartCount) parts.push(`after ${s.restartCount} restart${s.restartCount === 1 ? "" : "s"}`);
  if (stuck && waiting !== "CrashLoopBackOff" && s.state?.waiting?.message)
    parts.push(`(${scrub(s.state.waiting.message)})`);
  if (last) {
    const how = `exited with code ${last.exitCode ?? "?"}${last.reason ? ` (${last.reason})` : ""}`;
    parts.push(s.state?.terminated ? how : `; it last ${how}`);
    const tail = last.message ? scrub(last.message) : "";
    if (tail) parts.push(`: ${tail}`);
  }
  return { stuck, message: parts.join(" ").replace(/ ;/g, ";").replace(/ :/g, ":") };
}

/**
 * The last lines of a message, one line, at most MESSAGE_TAIL characters, with token-like and
 * key-like strings masked: OpenBao service tokens (hvs./hvb./hvr./s.), JWTs, PEM blocks, and any long
 * unbroken run of base64 or hex, which is what keys and unseal material look like.
 */
export function scrub(message: string): string {
  let text = message
    .replace(/-----BEGIN [A-Z ]+-----[\s\S]*?(-----END [A-Z ]+-----|$)/g, "[redacted PEM]")
    .replace(/\b(?:hv[sbr]|[sbr])\.[A-Za-z0-9_-]{16,}/g, "[redacted token]")
    .replace(/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, "[redacted JWT]")
    .replace(/[A-Za-z0-9+/_-]{32,}={0,2}/g, "[redacted]");
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  text = lines.slice(-3).join(" | ");
  return text.length > MESSAGE_TAIL ? `…${text.slice(-MESSAGE_TAIL)}` : text;
}
