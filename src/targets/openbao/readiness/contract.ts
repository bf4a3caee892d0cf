/**
 * Upstream 0.5's configuration-readiness conditions and the reasons each may carry, with the status
 * each reason goes with. A result outside its condition's contract is written as Unknown/Unknown
 * naming what was refused, as upstream does, so a reason users alert on never appears with a status
 * it never has upstream.
 */
import {
  OpenBaoClusterCondition as C,
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../apis/openbaocluster-names.js";

export type ReadinessStatus = "True" | "False" | "Unknown";

export type ReadinessType =
  | typeof C.ACMEIntegrationReady
  | typeof C.GatewayIntegrationReady
  | typeof C.APIServerNetworkReady
  | typeof C.ACMECacheReady
  | typeof C.AuditFileStorageReady
  | typeof C.BackupConfigurationReady
  | typeof C.CloudUnsealIdentityReady
  | typeof C.UserAccessBootstrap;

/** One condition's evaluation; the message names objects and fields, never a secret value. */
export interface Readiness {
  status: ReadinessStatus;
  reason: OpenBaoClusterReasonType;
  message: string;
}

type Contract = ReadonlyMap<string, ReadinessStatus>;
const contract = (...entries: [OpenBaoClusterReasonType, ReadinessStatus][]): Contract => new Map(entries);

/** Paused, ProfileNotSet and Unknown, which every contract but ACMECacheReady's has upstream. */
const NOT_EVALUATED: [OpenBaoClusterReasonType, ReadinessStatus][] = [
  [R.Paused, "Unknown"],
  [R.ProfileNotSet, "Unknown"],
  [R.Unknown, "Unknown"],
];

export const CONTRACTS: Record<ReadinessType, Contract> = {
  [C.ACMEIntegrationReady]: contract(
    [R.ACMEIntegrationReady, "True"],
    [R.GatewayAPIMissing, "False"],
    [R.ACMEGatewayNotConfiguredForPassthrough, "False"],
    [R.ACMEDomainNotResolvable, "False"],
    [R.PrerequisitesMissing, "False"],
    ...NOT_EVALUATED,
  ),
  [C.GatewayIntegrationReady]: contract(
    [R.GatewayIntegrationReady, "True"],
    [R.GatewayAPIMissing, "False"],
    [R.GatewayReferenceMissing, "False"],
    [R.GatewayClassMissing, "False"],
    [R.GatewayListenerIncompatible, "False"],
    [R.GatewayClassNotAccepted, "False"],
    [R.GatewayVersionUnsupported, "False"],
    [R.GatewayFeatureUnsupported, "False"],
    [R.GatewayNotProgrammed, "False"],
    [R.GatewayRouteNotAccepted, "False"],
    [R.GatewayRouteReferencesUnresolved, "False"],
    [R.GatewayClassPending, "Unknown"],
    [R.GatewayCapabilitiesUnknown, "Unknown"],
    [R.GatewayProgrammingPending, "Unknown"],
    [R.GatewayRoutePending, "Unknown"],
    ...NOT_EVALUATED,
  ),
  [C.APIServerNetworkReady]: contract(
    [R.APIServerNetworkReady, "True"],
    [R.APIServerEndpointIPsRecommended, "Unknown"],
    [R.APIServerNetworkConfigurationInvalid, "False"],
    ...NOT_EVALUATED,
  ),
  // Upstream neither pauses this one nor waits for a profile: it is evaluated or left as it was.
  [C.ACMECacheReady]: contract(
    [R.ACMECacheReady, "True"],
    [R.ACMECacheNotConfigured, "False"],
    [R.ACMECacheMissing, "False"],
    [R.ACMECachePending, "False"],
    [R.ACMECacheInvalidAccessMode, "False"],
    [R.Unknown, "Unknown"],
  ),
  [C.AuditFileStorageReady]: contract(
    [R.AuditFileStorageReady, "True"],
    [R.AuditFileStorageMissing, "False"],
    [R.AuditFileStoragePending, "False"],
    [R.AuditFileStorageInvalidAccessMode, "False"],
    [R.AuditFileStorageStatefulSetRecreateRequired, "False"],
    ...NOT_EVALUATED,
  ),
  [C.BackupConfigurationReady]: contract(
    [R.Ready, "True"],
    [R.AmbientIdentityAssumed, "True"],
    [R.WorkloadIdentityConfigured, "True"],
    [R.AuthenticationRequired, "False"],
    [R.TokenSecretMissing, "False"],
    [R.CredentialsSecretMissing, "False"],
    [R.NetworkEgressRulesRequired, "False"],
    [R.SecurityViolation, "False"],
    ...NOT_EVALUATED,
  ),
  [C.CloudUnsealIdentityReady]: contract(
    [R.Ready, "True"],
    [R.AmbientIdentityAssumed, "True"],
    [R.WorkloadIdentityConfigured, "True"],
    [R.CredentialsSecretMissing, "False"],
    [R.PrerequisitesMissing, "False"],
    ...NOT_EVALUATED,
  ),
  // Always set, paused or not, as upstream.
  [C.UserAccessBootstrap]: contract(
    [R.UserAccessConfigured, "True"],
    [R.Disabled, "False"],
    [R.UserAccessUnverified, "Unknown"],
  ),
};

/** `r` when its contract allows it; otherwise Unknown/Unknown saying what was refused. */
export function withinContract(type: ReadinessType, r: Readiness): Readiness {
  if (CONTRACTS[type].get(r.reason) === r.status) return r;
  return {
    status: "Unknown",
    reason: R.Unknown,
    message: `${type}: the operator refused its own result ${r.status}/${r.reason}${r.message ? `: ${r.message}` : ""}`,
  };
}
