/**
 * The admission rules of OpenBaoCluster, OpenBaoRestore and OpenBaoTenant as one table: each rule's message (the
 * words the API server and `validate` both print), its CEL expression (what the chart's
 * ValidatingAdmissionPolicy evaluates) and the same rule in TypeScript (what `validate` and the
 * tests evaluate). The chart reads the CEL half from a generated file (see chart-data.ts), so the
 * two halves cannot drift apart in their words; the tests hold them to the same cases.
 *
 * The rules are upstream's (its policies validate-openbaocluster, validate-openbaorestore and
 * validate-openbao-tenant, here validate-openbaotenant like the other two), so a
 * user moving between the operators meets the same refusals; the messages are this project's, each
 * naming the field.
 * One is left out on purpose: upstream requires an enabled spec.initContainer with an image, because
 * its pods render their configuration in one; ours do not, and spec.initContainer is a field this
 * operator reports as unsupported, so requiring it would make every admitted cluster carry it.
 */

import { parseQuantity } from "../../../runtime/quantity.js";
import { type Authorizer, CLUSTER_DELEGATION, RESTORE_DELEGATION } from "./delegation.js";
import { HARDENED_RULES } from "./hardened.js";

export type { Authorizer } from "./delegation.js";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The value at a dotted path, or undefined where any step is missing. */
export function at(v: unknown, path: string): unknown {
  let cur = v;
  for (const key of path.split(".")) {
    if (!isObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}
const str = (v: unknown, path: string): string => {
  const s = at(v, path);
  return typeof s === "string" ? s : "";
};
const flag = (v: unknown, path: string): boolean => at(v, path) === true;
const list = (v: unknown, path: string): unknown[] => {
  const l = at(v, path);
  return Array.isArray(l) ? l : [];
};

/** What one rule sees: the object, and on UPDATE the object before it. */
export interface RuleInput {
  object: unknown;
  oldObject?: unknown;
  /** The operator's namespace (the chart's release namespace), for the tenant rule. */
  operatorNamespace?: string;
  /**
   * The API server's authorizer for the writer (CEL `authorizer`), for the rules that ask who may
   * set what (delegation.ts). Offline there is no writer: those rules admit.
   */
  authorizer?: Authorizer;
}

export interface PolicyRule {
  /** Short name for tests and docs. */
  id: string;
  /** The refusal, word for word as the API server returns it. */
  message: string;
  /** CEL over object/oldObject and the policy's variables; true admits. */
  cel: string;
  /** The same rule: true admits. */
  admits(input: RuleInput): boolean;
  /** The field the rule is about, where it is one (the webhook reports refusals by field). */
  field?: string;
  /** The operator's webhook refuses it too (Hardened's refusals), so clusters without the policies are as safe. */
  webhook?: boolean;
  /** It asks the authorizer: what the writer needs (a verb on the cluster, or get on a Secret). */
  needs?: string;
}

export interface PolicyTable {
  /** The upstream policy name; the chart's object is `<release>-<name>`. */
  name: string;
  resource: "openbaoclusters" | "openbaorestores" | "openbaotenants";
  /** CEL variables the rules share, in order. */
  variables: { name: string; expression: string }[];
  /**
   * Variables the table does not know and the chart supplies ahead of `variables`, each a CEL
   * string literal (operatorNamespace: the release namespace). The TypeScript half takes them
   * from RuleInput.
   */
  parameters?: "operatorNamespace"[];
  rules: PolicyRule[];
}

// ---------------------------------------------------------------- shared pieces

const SYSTEM_SECRET = /^.*-(unseal-key|root-token|tls-ca|tls-server)$/;
const SYSTEM_SECRET_CEL = "^.*-(unseal-key|root-token|tls-ca|tls-server)$";
const isSystemSecret = (name: string) => SYSTEM_SECRET.test(name);

/** localhost, loopback, or a host written as a bare number (decimal IP encoding). */
const localEndpoint = (e: string) =>
  e.includes("localhost") || e.includes("127.0.0.1") || e.includes("::1") || /^https?:\/\/[0-9]+[:/]/.test(e);
const localEndpointCel = (e: string) =>
  `(${e}.contains("localhost") || ${e}.contains("127.0.0.1") || ${e}.contains("::1") || ${e}.matches("^https?://[0-9]+[:/]"))`;
const linkLocal = (e: string) => /^https?:\/\/169\.254\./.test(e);
const linkLocalCel = (e: string) => `${e}.matches("^https?://169\\\\.254\\\\.")`;

const hardened = (o: unknown) => str(o, "spec.profile") === "Hardened";
const backupOn = (o: unknown) => isObject(at(o, "spec.backup"));
const endpoint = (o: unknown) => str(o, "spec.backup.target.endpoint");

function quantityBytes(q: unknown): number | undefined {
  if (typeof q === "number") return q;
  return typeof q === "string" ? parseQuantity(q) : undefined;
}

const requestPaths = (o: unknown) =>
  list(o, "spec.selfInit.requests").map((r) =>
    isObject(r) && typeof r["path"] === "string" ? r["path"] : "",
  );

// ---------------------------------------------------------------- OpenBaoCluster

export const CLUSTER_POLICY: PolicyTable = {
  name: "validate-openbaocluster",
  resource: "openbaoclusters",
  variables: [
    { name: "hardened", expression: `object.spec.?profile.orValue("") == "Hardened"` },
    { name: "backup", expression: "has(object.spec.backup)" },
    { name: "endpoint", expression: `object.spec.?backup.?target.?endpoint.orValue("")` },
    { name: "selfInit", expression: `object.spec.?selfInit.?enabled.orValue(false) == true` },
    { name: "requests", expression: "object.spec.?selfInit.?requests.orValue([])" },
    {
      name: "snapshots",
      expression:
        "object.spec.?upgrade.?preUpgradeSnapshot.orValue(false) == true || object.spec.?upgrade.?blueGreen.?preUpgradeSnapshot.orValue(false) == true",
    },
  ],
  rules: [
    {
      id: "hardened-baseline",
      message:
        "profile Hardened: spec.tls.mode must be External or ACME, spec.unseal an external seal (not static), spec.selfInit.enabled true, and no seal may set tlsSkipVerify: true.",
      cel: `!variables.hardened || (object.spec.?tls.?mode.orValue("") in ["External", "ACME"] && object.spec.?unseal.?type.orValue("static") != "static" && variables.selfInit && !object.spec.?unseal.?transit.?tlsSkipVerify.orValue(false) && !object.spec.?unseal.?kmip.?tlsSkipVerify.orValue(false))`,
      admits: ({ object: o }) =>
        !hardened(o) ||
        (["External", "ACME"].includes(str(o, "spec.tls.mode")) &&
          (str(o, "spec.unseal.type") || "static") !== "static" &&
          flag(o, "spec.selfInit.enabled") &&
          !flag(o, "spec.unseal.transit.tlsSkipVerify") &&
          !flag(o, "spec.unseal.kmip.tlsSkipVerify")),
    },
    {
      id: "self-init-requests",
      message: "spec.selfInit.enabled is true but spec.selfInit.requests is missing or empty.",
      cel: "!variables.selfInit || size(variables.requests) > 0",
      admits: ({ object: o }) =>
        !flag(o, "spec.selfInit.enabled") || list(o, "spec.selfInit.requests").length > 0,
    },
    {
      id: "self-init-request-shape",
      message:
        "spec.selfInit.requests: at most 64 requests, each name used once, each path at most 256 characters.",
      cel: `!variables.selfInit || (size(variables.requests) <= 64 && variables.requests.all(r, variables.requests.filter(x, x.?name.orValue("") == r.?name.orValue("")).size() == 1) && variables.requests.all(r, size(r.?path.orValue("")) <= 256))`,
      admits: ({ object: o }) => {
        if (!flag(o, "spec.selfInit.enabled")) return true;
        const reqs = list(o, "spec.selfInit.requests");
        const names = reqs.map((r) => str(r, "name"));
        return (
          reqs.length <= 64 &&
          new Set(names).size === names.length &&
          requestPaths(o).every((p) => [...p].length <= 256)
        );
      },
    },
    {
      id: "gateway-required",
      message: "spec.gateway.enabled is true: set spec.gateway.hostname and spec.gateway.gatewayRef.name.",
      cel: `object.spec.?gateway.?enabled.orValue(false) != true || (object.spec.gateway.?hostname.orValue("") != "" && object.spec.gateway.?gatewayRef.?name.orValue("") != "")`,
      admits: ({ object: o }) =>
        !flag(o, "spec.gateway.enabled") ||
        (str(o, "spec.gateway.hostname") !== "" && str(o, "spec.gateway.gatewayRef.name") !== ""),
    },
    {
      id: "backup-required",
      message:
        "spec.backup needs a five-field cron spec.backup.schedule, a way to log in to OpenBao (jwtAuthRole, tokenSecretRef, or spec.selfInit.oidc.enabled with no role) and a way into the object store (target.roleArn or target.credentialsSecretRef).",
      cel: `!variables.backup || (object.spec.backup.?schedule.orValue("").matches("^\\\\S+\\\\s+\\\\S+\\\\s+\\\\S+\\\\s+\\\\S+\\\\s+\\\\S+$") && (object.spec.backup.?jwtAuthRole.orValue("") != "" || has(object.spec.backup.tokenSecretRef) || object.spec.?selfInit.?oidc.?enabled.orValue(false) == true) && (object.spec.backup.?target.?roleArn.orValue("") != "" || has(object.spec.backup.target.credentialsSecretRef)))`,
      admits: ({ object: o }) =>
        !backupOn(o) ||
        (/^\S+\s+\S+\s+\S+\s+\S+\s+\S+$/.test(str(o, "spec.backup.schedule")) &&
          (str(o, "spec.backup.jwtAuthRole") !== "" ||
            isObject(at(o, "spec.backup.tokenSecretRef")) ||
            flag(o, "spec.selfInit.oidc.enabled")) &&
          (str(o, "spec.backup.target.roleArn") !== "" ||
            isObject(at(o, "spec.backup.target.credentialsSecretRef")))),
    },
    {
      id: "hardened-egress",
      message:
        "profile Hardened with backups or pre-upgrade snapshots: spec.network.egressRules must list the way to the object store.",
      cel: "!variables.hardened || !(variables.backup || variables.snapshots) || size(object.spec.?network.?egressRules.orValue([])) > 0",
      admits: ({ object: o }) =>
        !hardened(o) ||
        !(
          backupOn(o) ||
          flag(o, "spec.upgrade.preUpgradeSnapshot") ||
          flag(o, "spec.upgrade.blueGreen.preUpgradeSnapshot")
        ) ||
        list(o, "spec.network.egressRules").length > 0,
    },
    {
      id: "backup-endpoint-local",
      message:
        "spec.backup.target.endpoint may not name this host (localhost, 127.0.0.1, ::1) or a number-encoded address: a request forgery guard.",
      cel: `!variables.backup || !${localEndpointCel("variables.endpoint")}`,
      admits: ({ object: o }) => !backupOn(o) || !localEndpoint(endpoint(o)),
    },
    {
      id: "backup-endpoint-link-local",
      message:
        "spec.backup.target.endpoint may not be a link-local address (169.254.*, where cloud metadata services answer).",
      cel: `!variables.backup || !${linkLocalCel("variables.endpoint")}`,
      admits: ({ object: o }) => !backupOn(o) || !linkLocal(endpoint(o)),
    },
    {
      id: "hardened-backup-scheme",
      message: "profile Hardened: spec.backup.target.endpoint must start with https:// or s3://.",
      cel: `!variables.hardened || !variables.backup || variables.endpoint == "" || variables.endpoint.startsWith("https://") || variables.endpoint.startsWith("s3://")`,
      admits: ({ object: o }) => {
        const e = endpoint(o);
        return !hardened(o) || !backupOn(o) || e === "" || e.startsWith("https://") || e.startsWith("s3://");
      },
    },
    {
      id: "hardened-replicas",
      message:
        "profile Hardened: spec.replicas must be 3 or more, so Raft keeps a quorum through one loss (profile Development allows fewer).",
      // Unset replicas is the schema's default of 3.
      cel: "!variables.hardened || object.spec.?replicas.orValue(3) >= 3",
      admits: ({ object: o }) => {
        const r = at(o, "spec.replicas");
        return !hardened(o) || (typeof r === "number" ? r : 3) >= 3;
      },
    },
    {
      id: "system-secret-refs",
      message:
        "spec.backup and spec.upgrade may not refer to the operator's own Secrets (names ending -unseal-key, -root-token, -tls-ca, -tls-server): a Job must not be lent keys it was not given.",
      cel: `[object.spec.?backup.?target.?credentialsSecretRef.?name.orValue(""), object.spec.?backup.?tokenSecretRef.?name.orValue(""), object.spec.?upgrade.?tokenSecretRef.?name.orValue("")].all(n, !n.matches("${SYSTEM_SECRET_CEL}"))`,
      admits: ({ object: o }) =>
        ![
          str(o, "spec.backup.target.credentialsSecretRef.name"),
          str(o, "spec.backup.tokenSecretRef.name"),
          str(o, "spec.upgrade.tokenSecretRef.name"),
        ].some(isSystemSecret),
    },
    {
      id: "storage-class-immutable",
      message: "spec.storage.storageClassName cannot change once set.",
      cel: `oldObject == null || !has(oldObject.spec.storage) || !has(oldObject.spec.storage.storageClassName) || object.spec.?storage.?storageClassName.orValue("") == oldObject.spec.storage.storageClassName`,
      admits: ({ object: o, oldObject: old }) =>
        old === undefined ||
        typeof at(old, "spec.storage.storageClassName") !== "string" ||
        str(o, "spec.storage.storageClassName") === str(old, "spec.storage.storageClassName"),
    },
    {
      id: "storage-size-shrink",
      message: "spec.storage.size may grow, never shrink.",
      cel: `oldObject == null || !has(oldObject.spec.storage) || !has(oldObject.spec.storage.size) || !has(object.spec.storage) || !has(object.spec.storage.size) || quantity(string(object.spec.storage.size)).compareTo(quantity(string(oldObject.spec.storage.size))) >= 0`,
      admits: ({ object: o, oldObject: old }) => {
        if (old === undefined) return true;
        const before = quantityBytes(at(old, "spec.storage.size"));
        const after = quantityBytes(at(o, "spec.storage.size"));
        return before === undefined || after === undefined || after >= before;
      },
    },
    {
      id: "oidc-issuer",
      message:
        "spec.selfInit.oidc.issuer must be an https:// URL without user, query or fragment, not on this host or a link-local address, and without /.well-known/.",
      cel: `object.spec.?selfInit.?oidc.?issuer.orValue("") == "" || (object.spec.selfInit.oidc.issuer.startsWith("https://") && !["@", "?", "#", "localhost", "127.0.0.1", "::1", "/.well-known/"].exists(s, object.spec.selfInit.oidc.issuer.contains(s)) && !${linkLocalCel("object.spec.selfInit.oidc.issuer")})`,
      admits: ({ object: o }) => {
        const i = str(o, "spec.selfInit.oidc.issuer");
        return (
          i === "" ||
          (i.startsWith("https://") &&
            !["@", "?", "#", "localhost", "127.0.0.1", "::1", "/.well-known/"].some((s) => i.includes(s)) &&
            !linkLocal(i))
        );
      },
    },
    {
      id: "self-init-jwt-mount",
      message:
        "spec.selfInit.requests writes under auth/jwt/ but has no request to sys/auth/jwt that enables the mount.",
      cel: `!variables.requests.exists(r, r.?path.orValue("").startsWith("auth/jwt/")) || variables.requests.exists(r, r.?path.orValue("") == "sys/auth/jwt")`,
      admits: ({ object: o }) => {
        const paths = requestPaths(o);
        return !paths.some((p) => p.startsWith("auth/jwt/")) || paths.includes("sys/auth/jwt");
      },
    },
    {
      id: "self-init-jwt-operator-mount",
      message:
        "spec.selfInit.requests writes under auth/jwt-operator/ but neither enables that mount (sys/auth/jwt-operator) nor sets spec.selfInit.oidc.enabled.",
      cel: `!variables.requests.exists(r, r.?path.orValue("").startsWith("auth/jwt-operator/")) || object.spec.?selfInit.?oidc.?enabled.orValue(false) == true || variables.requests.exists(r, r.?path.orValue("") == "sys/auth/jwt-operator")`,
      admits: ({ object: o }) => {
        const paths = requestPaths(o);
        return (
          !paths.some((p) => p.startsWith("auth/jwt-operator/")) ||
          flag(o, "spec.selfInit.oidc.enabled") ||
          paths.includes("sys/auth/jwt-operator")
        );
      },
    },
    ...HARDENED_RULES.map((r) => ({ ...r, webhook: true })),
    ...CLUSTER_DELEGATION,
  ],
};

// ---------------------------------------------------------------- OpenBaoRestore

const restoreEndpoint = (o: unknown) => str(o, "spec.source.target.endpoint");

export const RESTORE_POLICY: PolicyTable = {
  name: "validate-openbaorestore",
  resource: "openbaorestores",
  variables: [{ name: "endpoint", expression: `object.spec.?source.?target.?endpoint.orValue("")` }],
  rules: [
    {
      id: "override-lock-needs-force",
      message: "spec.overrideOperationLock needs spec.force: true as well.",
      cel: "object.spec.?overrideOperationLock.orValue(false) != true || object.spec.?force.orValue(false) == true",
      admits: ({ object: o }) => !flag(o, "spec.overrideOperationLock") || flag(o, "spec.force"),
    },
    {
      id: "restore-endpoint-local",
      message:
        "spec.source.target.endpoint may not name this host (localhost, 127.0.0.1, ::1) or a number-encoded address: a request forgery guard.",
      cel: `!${localEndpointCel("variables.endpoint")}`,
      admits: ({ object: o }) => !localEndpoint(restoreEndpoint(o)),
    },
    {
      id: "restore-endpoint-link-local",
      message:
        "spec.source.target.endpoint may not be a link-local address (169.254.*, where cloud metadata services answer).",
      cel: `!${linkLocalCel("variables.endpoint")}`,
      admits: ({ object: o }) => !linkLocal(restoreEndpoint(o)),
    },
    {
      id: "restore-endpoint-scheme",
      message:
        "spec.source.target.endpoint must start with https:// or s3://, or be http:// to a Service in the cluster (*.svc).",
      cel: `variables.endpoint == "" || variables.endpoint.startsWith("https://") || variables.endpoint.startsWith("s3://") || variables.endpoint.matches("^http://[^/]+\\\\.svc([.:/].*)?$")`,
      admits: ({ object: o }) => {
        const e = restoreEndpoint(o);
        return (
          e === "" ||
          e.startsWith("https://") ||
          e.startsWith("s3://") ||
          /^http:\/\/[^/]+\.svc([.:/].*)?$/.test(e)
        );
      },
    },
    {
      id: "restore-system-secret-refs",
      message:
        "an OpenBaoRestore may not refer to the operator's own Secrets (names ending -unseal-key, -root-token, -tls-ca, -tls-server): a Job must not be lent keys it was not given.",
      cel: `[object.spec.?source.?target.?credentialsSecretRef.?name.orValue(""), object.spec.?tokenSecretRef.?name.orValue("")].all(n, !n.matches("${SYSTEM_SECRET_CEL}"))`,
      admits: ({ object: o }) =>
        ![str(o, "spec.source.target.credentialsSecretRef.name"), str(o, "spec.tokenSecretRef.name")].some(
          isSystemSecret,
        ),
    },
    ...RESTORE_DELEGATION,
  ],
};

// ---------------------------------------------------------------- OpenBaoTenant

/**
 * The namespace a tenant object is in. Offline a manifest may leave it out; kubectl then puts it in
 * the context's namespace, taken here to be "default".
 */
const tenantHome = (o: unknown) => str(o, "metadata.namespace") || "default";

/**
 * Self-service: a tenant outside the operator's namespace may onboard only its own namespace (the
 * provisioner refuses the rest at run time too: tenant/guard.ts). An empty spec.targetNamespace
 * passes, as upstream's rule has it, though this project's CRD already requires one.
 */
export const TENANT_POLICY: PolicyTable = {
  name: "validate-openbaotenant",
  resource: "openbaotenants",
  parameters: ["operatorNamespace"],
  variables: [
    { name: "home", expression: "object.metadata.?namespace.orValue(request.namespace)" },
    { name: "target", expression: `object.spec.?targetNamespace.orValue("")` },
  ],
  rules: [
    {
      id: "tenant-own-namespace",
      message:
        "spec.targetNamespace must be the OpenBaoTenant's own namespace: only a tenant in the operator's namespace may onboard another one.",
      cel: `variables.home == variables.operatorNamespace || variables.target == "" || variables.target == variables.home`,
      admits: ({ object: o, operatorNamespace }) => {
        const target = str(o, "spec.targetNamespace");
        return tenantHome(o) === operatorNamespace || target === "" || target === tenantHome(o);
      },
    },
  ],
};

export const POLICY_TABLES: readonly PolicyTable[] = [CLUSTER_POLICY, RESTORE_POLICY, TENANT_POLICY];

/** The messages of the rules `input` breaks, in table order. */
export function refusals(table: PolicyTable, input: RuleInput): PolicyRule[] {
  return table.rules.filter((r) => !r.admits(input));
}
