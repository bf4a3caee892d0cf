import type { OpenBaoClusterSpec } from "../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  type OpenBaoClusterReasonType,
  OpenBaoClusterReason as R,
} from "../../../apis/openbaocluster-names.js";
import type { ConditionInput } from "../../../runtime/conditions.js";
import type { AdmissionReadiness as PolicyCheck } from "../policies/dependencies.js";

/**
 * The security posture a cluster's spec declares, and what upstream's operator derives from it:
 * ProductionReady and EtcdEncryptionWarning. Pure: the inputs
 * that are not in the spec (whether the admission policies are in place) are passed in.
 */

export type Profile = "Hardened" | "Development";

export interface Posture {
  /** undefined: spec.profile is not set (upstream has no default). */
  profile: Profile | undefined;
  tlsMode: "OperatorManaged" | "External" | "ACME";
  /** The unseal key is the operator's static key in a Secret (no unseal block counts as static). */
  staticUnseal: boolean;
  /** OpenBao initializes itself from spec.selfInit, so no root token is ever stored. */
  selfInit: boolean;
}

type SpecView = Pick<OpenBaoClusterSpec, "profile" | "tls" | "unseal" | "selfInit">;

export function postureOf(spec: SpecView): Posture {
  const p = spec.profile;
  const mode = spec.tls?.mode;
  return {
    profile: p === "Hardened" || p === "Development" ? p : undefined,
    tlsMode: mode === "External" || mode === "ACME" ? mode : "OperatorManaged",
    staticUnseal: (spec.unseal?.type ?? "static") === "static",
    selfInit: spec.selfInit?.enabled === true,
  };
}

/** What ProductionReady needs of the start-up check of the admission policies. */
export type AdmissionReadiness = Pick<PolicyCheck, "ready" | "summary">;

type Input = Omit<ConditionInput<OpenBaoClusterReasonType>, "observedGeneration">;

/**
 * ProductionReady, with upstream's order of reasons: the first thing that keeps the cluster from
 * production is the one named, so fixing them one by one walks down this list.
 */
export function productionReadiness(p: Posture, admission: AdmissionReadiness | undefined): Input {
  const no = (reason: OpenBaoClusterReasonType, message: string): Input => ({
    type: C.ProductionReady,
    status: "False",
    reason,
    message,
  });
  if (!p.profile)
    return no(R.ProfileNotSet, "spec.profile is not set; set it to Hardened for production (or Development)");
  if (p.profile === "Development")
    return no(R.DevelopmentProfile, "spec.profile is Development, which is not meant for production");
  if (!admission?.ready)
    return no(
      R.AdmissionPoliciesNotReady,
      admission?.summary ?? "the operator has not found out yet whether its admission policies are installed",
    );
  if (p.tlsMode === "OperatorManaged")
    return no(
      R.OperatorManagedTLS,
      "spec.tls.mode is OperatorManaged: production certificates come from your own PKI (External) or ACME",
    );
  if (p.staticUnseal)
    return no(
      R.StaticUnsealInUse,
      "the unseal key is the operator's static key in a Secret: use an external seal (transit, a cloud KMS, PKCS#11, KMIP)",
    );
  if (!p.selfInit)
    return no(
      R.RootTokenStored,
      "spec.selfInit is off, so the operator keeps a root token in a Secret: initialize with spec.selfInit",
    );
  return {
    type: C.ProductionReady,
    status: "True",
    reason: R.ProductionReady,
    message:
      "Hardened profile, admission policies in place, External or ACME TLS, an external seal and self-init",
  };
}

/**
 * Upstream always reports this as True: nothing an operator can read says whether the API server
 * encrypts Secrets at rest, and the root token, the static unseal key and the TLS keys live there.
 */
export function etcdEncryptionWarning(): Input {
  return {
    type: C.EtcdEncryptionWarning,
    status: "True",
    reason: R.EtcdEncryptionUnknown,
    message:
      "whether the API server encrypts Secrets at rest in etcd cannot be seen from here; this cluster's keys and tokens are kept in Secrets: make sure an EncryptionConfiguration covers secrets",
  };
}

/**
 * Only with spec.workloadHardening.appArmorEnabled (else undefined: the condition goes): True when
 * the StatefulSet controller could not create pods for a reason that names AppArmor (its
 * ReplicaFailure condition, e.g. an admission that refuses the profile), False otherwise.
 */
export function nodeCapability(
  appArmorEnabled: boolean,
  replicaFailure: string | undefined,
): Input | undefined {
  if (!appArmorEnabled) return undefined;
  if (replicaFailure && /apparmor/i.test(replicaFailure))
    return {
      type: C.NodeSecurityCapabilityMismatch,
      status: "True",
      reason: R.AppArmorUnsupported,
      message: `spec.workloadHardening.appArmorEnabled is set, and the pods cannot be created with AppArmor: ${replicaFailure}`,
    };
  return {
    type: C.NodeSecurityCapabilityMismatch,
    status: "False",
    reason: R.Ready,
    message: "no pod of the StatefulSet was refused for its AppArmor profile",
  };
}
