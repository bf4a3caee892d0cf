/**
 * spec.selfInit.oidc: the `initialize` block that sets up OpenBao's JWT auth for the operator and its
 * executor Jobs while OpenBao initializes itself, so nothing has to be configured by hand after the
 * root token is revoked. Upstream's layout (0.3.0 and later): the mount `auth/jwt-operator` trusting
 * the Kubernetes API server's ServiceAccount issuer, and one policy and role each for the operator,
 * backups (when spec.backup is set), upgrades and restores, each role bound to that cluster's
 * ServiceAccount plus spec.selfInit.oidc.additionalSubjects.
 *
 * Pure: the issuer and its signing keys are observed by the caller (steps/oidc-facts.ts). The output
 * depends only on the spec and those facts, in a fixed order, so a second pass or a restarted
 * operator renders the same file.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { DEFAULT_OPENBAO_AUDIENCE } from "../../config.js";
import { DEFAULT_JWT_MOUNT_PATH } from "../../executor/contract.js";
import { clusterNames } from "../../identity.js";
import { bootstrapRole, type OidcBootstrapFacts, OidcRole, oidcEnabled } from "../../oidc-roles.js";
import { ConfigError } from "./errors.js";
import { attrs, block, type HclBlock, type HclNode, type HclObject } from "./hcl.js";

export type { OidcBootstrapFacts };

/** Name of the initialize block, ahead of the spec's own requests (upstream's). */
export const OIDC_BOOTSTRAP_BLOCK = "operator-bootstrap";

/** Upstream's policy names; fixed whatever the role is called. */
export const OidcPolicy = {
  operator: "openbao-operator",
  backup: "openbao-operator-backup",
  upgrade: "openbao-operator-upgrade",
  restore: "openbao-operator-restore",
} as const;

export type Grant = readonly [path: string, capabilities: readonly string[]];

// What each identity may do, as upstream 0.5 grants it (paths and capabilities).
const OPERATOR_GRANTS: readonly Grant[] = [
  ["sys/health", ["read"]],
  ["sys/step-down", ["sudo", "update"]],
  ["sys/storage/raft/configuration", ["read"]],
  ["sys/storage/raft/remove-peer", ["update"]],
  ["sys/storage/raft/autopilot/configuration", ["read", "update"]],
  ["sys/storage/raft/autopilot/state", ["read"]],
];
/**
 * Ours, beyond upstream: a cluster with read replicas needs the operator to put them back on
 * Autopilot's permanent non-voter list after a restore (workload/autopilot/read-replica-suffrage.ts).
 * Granted only then, so a cluster without read replicas keeps exactly upstream's operator policy.
 */
export const OPERATOR_DEMOTE_GRANT: Grant = ["sys/storage/raft/demote", ["update"]];
const BACKUP_GRANTS: readonly Grant[] = [["sys/storage/raft/snapshot", ["read"]]];
const UPGRADE_GRANTS: readonly Grant[] = [
  ["sys/health", ["read"]],
  ["sys/step-down", ["sudo", "update"]],
  ["sys/storage/raft/snapshot", ["read"]],
  ["sys/storage/raft/autopilot/state", ["read"]],
];
// Blue-green also joins, promotes and removes Raft members.
const BLUE_GREEN_GRANTS: readonly Grant[] = [
  ["sys/storage/raft/join", ["update"]],
  ["sys/storage/raft/configuration", ["read", "update"]],
  ["sys/storage/raft/remove-peer", ["update"]],
  ["sys/storage/raft/promote", ["update"]],
  ["sys/storage/raft/demote", ["update"]],
];
// Both paths: the seal-checked one by default, the forced one only with the restore's spec.force.
const RESTORE_GRANTS: readonly Grant[] = [
  ["sys/storage/raft/snapshot", ["update"]],
  ["sys/storage/raft/snapshot-force", ["update"]],
];

/** The operator's grants for `cluster`: upstream's, plus demote when it has read replicas. Pure. */
export function operatorGrants(cluster: OpenBaoCluster): readonly Grant[] {
  return (cluster.spec.readReplicas?.replicas ?? 0) > 0
    ? [...OPERATOR_GRANTS, OPERATOR_DEMOTE_GRANT]
    : OPERATOR_GRANTS;
}

/** An ACL policy's text, one path a line. */
export function policyText(grants: readonly Grant[]): string {
  return grants
    .map(([path, caps]) => `path "${path}" { capabilities = [${caps.map((c) => `"${c}"`).join(", ")}] }`)
    .join("\n");
}

const ROLE_TTL = "1h";
const LEEWAY = "30s";

/** A JWT role bound to exact subjects: `bound_subject` for one, a `sub` claim list for several. */
function roleData(subjects: readonly string[], policy: string, audience: string): HclObject {
  const unique = [...new Set(subjects)].sort();
  return {
    role_type: "jwt",
    user_claim: "sub",
    bound_audiences: [audience],
    ...(unique.length === 1 ? { bound_subject: unique[0]! } : { bound_claims: { sub: unique } }),
    token_policies: [policy],
    token_ttl: ROLE_TTL,
    token_max_ttl: ROLE_TTL,
    token_no_default_policy: true,
    clock_skew_leeway: LEEWAY,
    expiration_leeway: LEEWAY,
    not_before_leeway: LEEWAY,
  };
}

function request(name: string, path: string, data: HclObject, field: string): HclBlock {
  return block(
    "request",
    [name],
    [...attrs({ operation: "update", path }, field), block("data", [], attrs(data, `${field}.data`))],
  );
}

const ROLE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const SUBJECT = /^system:serviceaccount:[a-z0-9]([-a-z0-9]*[a-z0-9])?:[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;

/** The initialize block, or undefined when selfInit.oidc is not enabled. Throws ConfigError naming a bad field. */
export function oidcBootstrapBlock(
  cluster: OpenBaoCluster,
  facts: OidcBootstrapFacts | undefined,
): HclBlock | undefined {
  if (!oidcEnabled(cluster)) return undefined;
  const oidc = cluster.spec.selfInit!.oidc!;
  if (!facts)
    throw new ConfigError("selfInit.oidc", "the API server's ServiceAccount issuer has not been read yet");
  const issuer = (typeof oidc.issuer === "string" ? oidc.issuer.trim() : "") || facts.issuer;
  if (!issuer)
    throw new ConfigError("selfInit.oidc.issuer", "no issuer: set it, or let the API server tell it");
  if (facts.publicKeysPem.length === 0)
    throw new ConfigError("selfInit.oidc", "the API server published no ServiceAccount signing key");
  const extra: Partial<Record<string, string[]>> = {};
  for (const [who, list] of Object.entries(oidc.additionalSubjects ?? {})) {
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list))
      throw new ConfigError(`selfInit.oidc.additionalSubjects.${who}`, "must be a list of subjects");
    extra[who] = list as string[];
    list.forEach((s: unknown, i: number) => {
      if (typeof s !== "string" || !SUBJECT.test(s))
        throw new ConfigError(
          `selfInit.oidc.additionalSubjects.${who}[${i}]`,
          "must be system:serviceaccount:<namespace>:<name>",
        );
    });
  }
  const ns = cluster.metadata.namespace!;
  const names = clusterNames({ name: cluster.metadata.name!, namespace: ns });
  const own = (serviceAccount: string) => `system:serviceaccount:${ns}:${serviceAccount}`;
  const mount = DEFAULT_JWT_MOUNT_PATH;
  const f = "selfInit.oidc";
  const body: HclNode[] = [
    request(
      "enable-jwt-auth",
      `sys/auth/${mount}`,
      { type: "jwt", description: "JWT auth for the operator" },
      f,
    ),
    request(
      "config-jwt-auth",
      `auth/${mount}/config`,
      { bound_issuer: issuer, jwt_validation_pubkeys: [...facts.publicKeysPem] },
      f,
    ),
  ];
  const add = (
    what: "operator" | "backup" | "upgrade" | "restore",
    role: string,
    grants: readonly Grant[],
    subjects: readonly string[],
    audience: string,
  ): void => {
    body.push(
      request(
        `create-${what}-policy`,
        `sys/policies/acl/${OidcPolicy[what]}`,
        { policy: policyText(grants) },
        f,
      ),
    );
    if (subjects.length === 0) return;
    // A role name is a path segment inside OpenBao: nothing that could step into another path.
    if (!ROLE_NAME.test(role))
      throw new ConfigError(
        `${what === "restore" ? "restore" : what}.jwtAuthRole`,
        "must hold only letters, digits, _, - and . (it names a role under auth/jwt-operator/role/)",
      );
    body.push(
      request(
        what === "operator" ? "create-operator-role" : `create-${what}-jwt-role`,
        `auth/${mount}/role/${role}`,
        roleData(subjects, OidcPolicy[what], audience),
        f,
      ),
    );
  };
  // The Jobs' tokens carry the target's openBaoAudience; the operator's role too unless the spec says.
  const audience = facts.audience ?? DEFAULT_OPENBAO_AUDIENCE;
  const operatorSubjects = [
    ...(facts.operatorSubject ? [facts.operatorSubject] : []),
    ...(extra.operator ?? []),
  ];
  add(
    "operator",
    OidcRole.operator,
    operatorGrants(cluster),
    operatorSubjects,
    (typeof oidc.audience === "string" ? oidc.audience.trim() : "") || audience,
  );
  if (cluster.spec.backup)
    add(
      "backup",
      bootstrapRole(cluster, "backup"),
      BACKUP_GRANTS,
      [own(names.backupServiceAccount), ...(extra.backup ?? [])],
      audience,
    );
  const blueGreen = cluster.spec.upgrade?.strategy === "BlueGreen";
  add(
    "upgrade",
    bootstrapRole(cluster, "upgrade"),
    blueGreen ? [...UPGRADE_GRANTS, ...BLUE_GREEN_GRANTS] : UPGRADE_GRANTS,
    [own(names.upgradeServiceAccount), ...(extra.upgrade ?? [])],
    audience,
  );
  add(
    "restore",
    bootstrapRole(cluster, "restore"),
    RESTORE_GRANTS,
    [own(names.restoreServiceAccount), ...(extra.restore ?? [])],
    audience,
  );
  return block("initialize", [OIDC_BOOTSTRAP_BLOCK], body);
}
