/**
 * BackupConfigurationReady, pure, in upstream 0.5's order: a Hardened cluster's Jobs need explicit
 * egress rules; a backup needs a way to log in (a JWT role — selfInit.oidc's bootstrap gives one — or
 * a token Secret, never the root token); the Secrets it names must exist; True then says how the Job
 * reaches the object store (a credentials Secret, an explicit workload identity, or the ambient one).
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../apis/openbaocluster-names.js";
import { refOf } from "../cluster-ref.js";
import { clusterNames } from "../identity.js";
import { withBootstrapRole } from "../oidc-roles.js";
import type { Readiness } from "./contract.js";
import type { Lookup } from "./facts.js";
import { storeIdentity, storeIdentityMessage } from "./store-identity.js";

/** The Secrets the backup names, for observe.ts. */
export function backupSecretNames(c: OpenBaoCluster): string[] {
  const b = c.spec.backup;
  if (!b) return [];
  return [b.tokenSecretRef?.name?.trim(), b.target?.credentialsSecretRef?.name?.trim()].filter(
    (n): n is string => !!n,
  );
}

export function backupConfiguration(c: OpenBaoCluster, secrets: ReadonlyMap<string, Lookup>): Readiness {
  const b = c.spec.backup!;
  const ns = c.metadata.namespace;
  if (c.spec.profile === "Hardened" && !(c.spec.network?.egressRules?.length ?? 0))
    return {
      status: "False",
      reason: R.NetworkEgressRulesRequired,
      message:
        "spec.profile Hardened: backup Jobs reach the object store only through spec.network.egressRules, and none are set",
    };
  const auth = withBootstrapRole(c, "backup", b);
  const role = auth?.jwtAuthRole?.trim();
  const tokenSecret = auth?.tokenSecretRef?.name?.trim();
  if (!role && !tokenSecret)
    return {
      status: "False",
      reason: R.AuthenticationRequired,
      message:
        "backups need a way to log in: set spec.backup.jwtAuthRole or spec.backup.tokenSecretRef, or enable spec.selfInit.oidc",
    };
  const unreadable = (name: string) => secrets.get(name) === "forbidden";
  const absent = (name: string) => {
    const l = secrets.get(name);
    return l === undefined || l === "missing" || l === "not-served";
  };
  if (tokenSecret && unreadable(tokenSecret))
    return {
      status: "Unknown",
      reason: R.Unknown,
      message: `cannot read backup token Secret ${ns}/${tokenSecret}`,
    };
  if (tokenSecret && absent(tokenSecret))
    return {
      status: "False",
      reason: R.TokenSecretMissing,
      message: `backup token Secret ${ns}/${tokenSecret} (spec.backup.tokenSecretRef) does not exist`,
    };
  const target = b.target;
  const credentials = target?.credentialsSecretRef?.name?.trim();
  if (credentials && unreadable(credentials))
    return {
      status: "Unknown",
      reason: R.Unknown,
      message: `cannot read backup store credentials Secret ${ns}/${credentials}`,
    };
  if (credentials && absent(credentials))
    return {
      status: "False",
      reason: R.CredentialsSecretMissing,
      message: `backup store credentials Secret ${ns}/${credentials} (spec.backup.target.credentialsSecretRef) does not exist`,
    };
  const sa = clusterNames(refOf(c)).backupServiceAccount;
  const login = role
    ? `backup Jobs log in with JWT role ${role} as ServiceAccount ${sa}`
    : `backup Jobs log in with the token in Secret ${ns}/${tokenSecret}`;
  const how = `${login}; ${storeIdentityMessage(target, sa)}`;
  switch (storeIdentity(target)) {
    case "secret":
      return { status: "True", reason: R.Ready, message: how };
    case "workload":
      return { status: "True", reason: R.WorkloadIdentityConfigured, message: how };
    case "ambient":
      return { status: "True", reason: R.AmbientIdentityAssumed, message: how };
  }
}
