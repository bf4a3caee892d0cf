import {
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../apis/openbaocluster-names.js";
import type { Posture } from "./posture.js";

/**
 * The Warning events upstream repeats while a cluster runs with a weak setting, at most once an
 * hour each; when each was last said is kept in an annotation on the cluster (as upstream does,
 * so a restarted operator or another replica does not say it again early). Pure.
 */

export const WARNING_EVERY_MS = 60 * 60_000;

export interface PostureWarning {
  reason: OpenBaoClusterReasonType;
  annotation: string;
  note: string;
}

const WARNINGS: readonly (PostureWarning & { applies: (p: Posture) => boolean })[] = [
  {
    reason: R.ProfileNotSet,
    annotation: "openbao.org/last-profile-not-set-warning",
    note: "spec.profile is not set: set it to Hardened or Development",
    applies: (p) => p.profile === undefined,
  },
  {
    reason: R.DevelopmentProfile,
    annotation: "openbao.org/last-development-warning",
    note: "spec.profile is Development, which is not meant for production",
    applies: (p) => p.profile === "Development",
  },
  {
    reason: R.StaticUnsealInUse,
    annotation: "openbao.org/last-static-unseal-warning",
    note: "the unseal key is the operator's static key, kept in a Kubernetes Secret: safe only with Secrets encrypted at rest in etcd and tight RBAC on the namespace",
    applies: (p) => p.staticUnseal,
  },
  {
    reason: R.RootTokenStored,
    annotation: "openbao.org/last-root-token-warning",
    note: "spec.selfInit is off, so the operator keeps OpenBao's root token in a Kubernetes Secret",
    applies: (p) => !p.selfInit,
  },
];

/** The warnings that apply and were not said within the last hour (or whose stamp is unreadable). */
export function dueWarnings(
  posture: Posture,
  annotations: Readonly<Record<string, string>> | undefined,
  now: Date,
): PostureWarning[] {
  return WARNINGS.filter((w) => {
    if (!w.applies(posture)) return false;
    const last = Date.parse(annotations?.[w.annotation]?.trim() ?? "");
    return Number.isNaN(last) || now.getTime() - last >= WARNING_EVERY_MS;
  }).map(({ reason, annotation, note }) => ({ reason, annotation, note }));
}

/**
 * When the next reminder falls due (epoch ms): the earliest stamp of an applicable warning plus the
 * hour. Undefined when none applies, or one is due already or has no readable stamp (the pass that
 * just ran says and stamps those).
 */
export function nextWarningAt(
  posture: Posture,
  annotations: Readonly<Record<string, string>> | undefined,
): number | undefined {
  let next: number | undefined;
  for (const w of WARNINGS) {
    if (!w.applies(posture)) continue;
    const last = Date.parse(annotations?.[w.annotation]?.trim() ?? "");
    if (Number.isNaN(last)) continue;
    next = Math.min(next ?? Infinity, last + WARNING_EVERY_MS);
  }
  return next;
}
