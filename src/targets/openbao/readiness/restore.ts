/**
 * RestoreConfigurationReady on OpenBaoRestore, pure, in upstream 0.5's order: a Hardened cluster's
 * restore Job needs explicit egress rules; it needs a way to log in (a JWT role or a token Secret);
 * the token Secret must exist and, when it is the restore's own, carry a restore token's labels; the
 * store credentials Secret must exist; True then says how the Job reaches the store. The restore
 * controller decides how the Job logs in and which labels are missing (restore/validate.ts, a room
 * above this one) and hands both in with the Secrets it read.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import {
  OpenBaoRestoreCondition as C,
  type OpenBaoRestoreReasonType,
  OpenBaoRestoreReason as R,
} from "../../../apis/openbaorestore-names.js";
import { clusterNames } from "../identity.js";
import { egressRulesMissing } from "../profile/egress.js";
import type { ReadinessStatus } from "./contract.js";
import type { Lookup } from "./facts.js";
import { storeIdentity, storeIdentityMessage } from "./store-identity.js";

export interface RestoreReadiness {
  status: ReadinessStatus;
  reason: OpenBaoRestoreReasonType;
  message: string;
}

export interface RestoreConfigurationFacts {
  /** How the restore Job logs in, as the restore controller decided it; undefined: no way at all. */
  auth?: { method: "jwt"; role: string } | { method: "token"; secretName: string };
  /** The restore token labels its own token Secret lacks, as `k=v, …`; undefined when none or not asked. */
  tokenLabelsMissing?: string;
  /** The Secrets the restore names (its token, the store's credentials), as read this pass. */
  secrets: ReadonlyMap<string, Lookup>;
}

/** Upstream's reasons of RestoreConfigurationReady with the status each goes with. */
export const RESTORE_CONFIGURATION_CONTRACT: ReadonlyMap<OpenBaoRestoreReasonType, ReadinessStatus> = new Map<
  OpenBaoRestoreReasonType,
  ReadinessStatus
>([
  [R.Ready, "True"],
  [R.WorkloadIdentityConfigured, "True"],
  [R.AmbientIdentityAssumed, "True"],
  [R.NetworkEgressRulesRequired, "False"],
  [R.AuthenticationRequired, "False"],
  [R.TokenSecretMissing, "False"],
  [R.TokenSecretInvalid, "False"],
  [R.CredentialsSecretMissing, "False"],
  [R.Unknown, "Unknown"],
]);

export const RESTORE_CONFIGURATION_TYPE = C.RestoreConfigurationReady;

/** `r` when the contract allows it; otherwise Unknown/Unknown saying what was refused. */
export function withinRestoreContract(r: RestoreReadiness): RestoreReadiness {
  if (RESTORE_CONFIGURATION_CONTRACT.get(r.reason) === r.status) return r;
  return {
    status: "Unknown",
    reason: R.Unknown,
    message: `${C.RestoreConfigurationReady}: the operator refused its own result ${r.status}/${r.reason}${r.message ? `: ${r.message}` : ""}`,
  };
}

export function restoreConfiguration(
  r: OpenBaoRestore,
  c: OpenBaoCluster,
  f: RestoreConfigurationFacts,
): RestoreReadiness {
  return withinRestoreContract(evaluate(r, c, f));
}

function evaluate(r: OpenBaoRestore, c: OpenBaoCluster, f: RestoreConfigurationFacts): RestoreReadiness {
  const ns = r.metadata.namespace;
  const egress = egressRulesMissing(c.spec, "restore");
  if (egress) return { status: "False", reason: R.NetworkEgressRulesRequired, message: egress };
  const auth = f.auth;
  if (!auth)
    return {
      status: "False",
      reason: R.AuthenticationRequired,
      message:
        "the restore Job needs a way to log in: set spec.jwtAuthRole or spec.tokenSecretRef (or the cluster's spec.selfInit.oidc, spec.restore.jwtAuthRole or backup login)",
    };
  const lookup = (name: string) => f.secrets.get(name);
  const absent = (l: Lookup | undefined) => l === undefined || l === "missing" || l === "not-served";
  if (auth.method === "token") {
    const l = lookup(auth.secretName);
    if (l === "forbidden")
      return {
        status: "Unknown",
        reason: R.Unknown,
        message: `cannot read token Secret ${ns}/${auth.secretName}`,
      };
    if (absent(l))
      return {
        status: "False",
        reason: R.TokenSecretMissing,
        message: `token Secret ${ns}/${auth.secretName} the restore logs in with does not exist`,
      };
    if (f.tokenLabelsMissing)
      return {
        status: "False",
        reason: R.TokenSecretInvalid,
        message: `token Secret ${ns}/${auth.secretName} (spec.tokenSecretRef) lacks the labels a restore token carries: ${f.tokenLabelsMissing}`,
      };
  }
  const target = r.spec.source.target;
  const credentials = target.credentialsSecretRef?.name?.trim();
  if (credentials) {
    const l = lookup(credentials);
    if (l === "forbidden")
      return {
        status: "Unknown",
        reason: R.Unknown,
        message: `cannot read store credentials Secret ${ns}/${credentials}`,
      };
    if (absent(l))
      return {
        status: "False",
        reason: R.CredentialsSecretMissing,
        message: `store credentials Secret ${ns}/${credentials} (spec.source.target.credentialsSecretRef) does not exist`,
      };
  }
  const sa = clusterNames({ name: c.metadata.name!, namespace: c.metadata.namespace! }).restoreServiceAccount;
  const login =
    auth.method === "jwt"
      ? `the restore Job logs in with JWT role ${auth.role} as ServiceAccount ${sa}`
      : `the restore Job logs in with the token in Secret ${ns}/${auth.secretName}`;
  const message = `${login}; ${storeIdentityMessage(target, sa)}`;
  const reason = {
    secret: R.Ready,
    workload: R.WorkloadIdentityConfigured,
    ambient: R.AmbientIdentityAssumed,
  }[storeIdentity(target)];
  return { status: "True", reason, message };
}
