/**
 * Which OpenBao JWT role each executor logs in with when spec.selfInit.oidc bootstraps JWT auth:
 * the role the spec names, else its own token Secret, else upstream's default role name, which the
 * bootstrap creates (workload/config/oidc-bootstrap.ts). Pure.
 */
import type { OpenBaoCluster } from "../../apis/openbaocluster.js";

/**
 * Upstream's role names, used when the spec names no role of its own for that purpose. The same as
 * its policy names: a cluster that upstream's operator bootstrapped, or a snapshot of one restored
 * here, already holds roles by these names, and upstream's backup, upgrade and restore pages say an
 * empty `jwtAuthRole` means them.
 */
export const OidcRole = {
  operator: "openbao-operator",
  backup: "openbao-operator-backup",
  upgrade: "openbao-operator-upgrade",
  restore: "openbao-operator-restore",
} as const;

/** What the bootstrap needs that is not in the spec. */
export interface OidcBootstrapFacts {
  /** The API server's ServiceAccount issuer (its discovery document's `issuer`). */
  issuer: string;
  /** Its current signing keys as PEM public keys (its JWKS), sorted. */
  publicKeysPem: readonly string[];
  /**
   * The operator's own ServiceAccount, `system:serviceaccount:<ns>:<name>`, when it runs in a pod;
   * unset outside one (then only additionalSubjects.operator may log in as the operator).
   */
  operatorSubject?: string;
  /**
   * The target's openBaoAudience: the audience the backup, upgrade and restore roles are bound to
   * (their Jobs' projected tokens carry it), and the operator role's unless the spec names one.
   * DEFAULT_OPENBAO_AUDIENCE when unset.
   */
  audience?: string;
}

export type ExecutorPurpose = "backup" | "upgrade" | "restore";

/** The bootstrap runs: self-init is on and selfInit.oidc.enabled is set. */
export const oidcEnabled = (c: OpenBaoCluster): boolean =>
  c.spec.selfInit?.enabled === true && c.spec.selfInit.oidc?.enabled === true;

/** The role the bootstrap writes for `purpose`: the one the spec names, else upstream's. */
export function bootstrapRole(c: OpenBaoCluster, purpose: ExecutorPurpose): string {
  const section =
    purpose === "backup" ? c.spec.backup : purpose === "upgrade" ? c.spec.upgrade : c.spec.restore;
  return section?.jwtAuthRole?.trim() || OidcRole[purpose];
}

interface AuthSource {
  jwtAuthRole?: string;
  tokenSecretRef?: { name?: string };
}

/**
 * `src` as the spec gives it when it says how to log in (a role, or a token Secret reference, even
 * one naming nothing, which is reported elsewhere); otherwise, with the bootstrap on, the bootstrap's
 * role. Never the root token.
 */
export function withBootstrapRole(
  c: OpenBaoCluster,
  purpose: ExecutorPurpose,
  src: AuthSource | undefined,
): AuthSource | undefined {
  if (src?.jwtAuthRole?.trim() || src?.tokenSecretRef) return src;
  return oidcEnabled(c) ? { ...src, jwtAuthRole: OidcRole[purpose] } : src;
}
