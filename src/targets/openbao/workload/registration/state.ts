import type { KubeObject } from "../../../../runtime/types.js";
import {
  LABEL_OPENBAO_ACTIVE,
  LABEL_OPENBAO_INITIALIZED,
  LABEL_OPENBAO_SEALED,
  LABEL_OPENBAO_VERSION,
} from "../../identity.js";
import type { RegisteredPeers } from "../../metrics.js";

// What OpenBao's Kubernetes service registration says about a cluster, read from the labels it
// patches on its own pods, so a settled cluster's leader, seal and version state costs no request
// to OpenBao: a change reaches the operator as a pod event. Pure.

/** One pod's registration labels; a field is undefined when its label is absent or not "true"/"false". */
export interface PodRegistration {
  active?: boolean;
  sealed?: boolean;
  initialized?: boolean;
  version?: string;
}

const flag = (v: string | undefined): boolean | undefined =>
  v === "true" ? true : v === "false" ? false : undefined;

export function podRegistration(labels: Readonly<Record<string, string>> | undefined): PodRegistration {
  const l = labels ?? {};
  const out: PodRegistration = {};
  const active = flag(l[LABEL_OPENBAO_ACTIVE]);
  const sealed = flag(l[LABEL_OPENBAO_SEALED]);
  const initialized = flag(l[LABEL_OPENBAO_INITIALIZED]);
  if (active !== undefined) out.active = active;
  if (sealed !== undefined) out.sealed = sealed;
  if (initialized !== undefined) out.initialized = initialized;
  if (l[LABEL_OPENBAO_VERSION]) out.version = l[LABEL_OPENBAO_VERSION];
  return out;
}

export interface RegisteredState {
  /**
   * The active node's pod; "" when every running pod says it is not active. Undefined when the
   * labels cannot tell (two pods say active, or a running pod carries no label while none says so).
   */
  activeLeader?: string;
  /**
   * Pod 0's state, as the status reports it (the pod the API was asked before): undefined when pod 0
   * is not running or its labels are incomplete.
   */
  pod0?: { sealed: boolean; initialized: boolean; version?: string };
  /** Why the labels do not answer everything; empty when they answer all of it. */
  gaps: string[];
}

/** Running and not on its way out: a terminating pod's labels say what it was, not what is. */
function live(p: KubeObject): boolean {
  const phase = (p["status"] as { phase?: string } | undefined)?.phase;
  return !p.metadata.deletionTimestamp && phase === "Running";
}

/**
 * The cluster's state from its server pods' labels (every revision's: after a blue-green cutover
 * the active node is a green pod). `pod0` names the serving revision's first voter.
 *
 * A pod whose labels are missing (OpenBao not started yet, an image without the registration, RBAC
 * refused its patch) leaves a gap; the caller asks OpenBao's API then. Two pods saying active (an
 * old leader killed before it could unset its label while a new one was elected) is a gap too: the
 * labels settle once the old pod restarts and labels itself again.
 */
export function registeredState(pods: readonly KubeObject[], pod0: string): RegisteredState {
  const gaps: string[] = [];
  const running = pods.filter(live);
  const regs = running.map((p) => ({ name: p.metadata.name!, reg: podRegistration(p.metadata.labels) }));
  const unlabelled = regs.filter((r) => r.reg.active === undefined).map((r) => r.name);
  const actives = regs.filter((r) => r.reg.active === true).map((r) => r.name);
  let activeLeader: string | undefined;
  if (actives.length === 1) activeLeader = actives[0];
  else if (actives.length > 1) gaps.push(`pods ${actives.join(", ")} each say they are active`);
  else if (running.length === 0) gaps.push("no server pod is running");
  else if (unlabelled.length > 0)
    gaps.push(`no pod says it is active and ${unlabelled.join(", ")} carry no ${LABEL_OPENBAO_ACTIVE} label`);
  else activeLeader = "";

  let first: RegisteredState["pod0"];
  const p0 = regs.find((r) => r.name === pod0);
  if (!p0) gaps.push(`pod ${pod0} is not running`);
  else if (p0.reg.sealed === undefined || p0.reg.initialized === undefined)
    gaps.push(`pod ${pod0} carries no ${LABEL_OPENBAO_SEALED}/${LABEL_OPENBAO_INITIALIZED} labels`);
  else
    first = {
      sealed: p0.reg.sealed,
      initialized: p0.reg.initialized,
      ...(p0.reg.version ? { version: p0.reg.version } : {}),
    };
  return { ...(activeLeader !== undefined ? { activeLeader } : {}), ...(first ? { pod0: first } : {}), gaps };
}

/**
 * Whether a pod update can change what registeredState answers: a registration label, the pod
 * starting to terminate, or its phase. Other pod updates (conditions, IPs) do not wake the cluster.
 */
export function registrationMoved(o: KubeObject | undefined, n: KubeObject): boolean {
  if (!o) return true;
  const a = o.metadata.labels ?? {};
  const b = n.metadata.labels ?? {};
  for (const k of [
    LABEL_OPENBAO_ACTIVE,
    LABEL_OPENBAO_SEALED,
    LABEL_OPENBAO_INITIALIZED,
    LABEL_OPENBAO_VERSION,
  ])
    if (a[k] !== b[k]) return true;
  if (!o.metadata.deletionTimestamp !== !n.metadata.deletionTimestamp) return true;
  const phase = (p: KubeObject) => (p["status"] as { phase?: string } | undefined)?.phase;
  return phase(o) !== phase(n);
}

/**
 * The running server pods of every revision by their registration labels, for the Raft peers gauge.
 * A sealed pod is still a Raft member but cannot vote, so a majority of spec.replicas needs active +
 * standby. Pods not running, terminating or without the labels count in none: the labels would say
 * what they were, not what is.
 */
export function registeredPeers(pods: readonly KubeObject[]): RegisteredPeers {
  const out: RegisteredPeers = { active: 0, standby: 0, sealed: 0 };
  for (const p of pods.filter(live)) {
    const reg = podRegistration(p.metadata.labels);
    if (reg.sealed === true) out.sealed++;
    else if (reg.sealed === false && reg.active === true) out.active++;
    else if (reg.sealed === false && reg.active === false) out.standby++;
  }
  return out;
}
