/**
 * UserAccessBootstrap, pure and best effort, as upstream 0.5: whether a self-init request sets up an
 * auth method people log in with (a write under auth/<mount>, or enabling a user-facing method under
 * sys/auth/<mount>), the operator's own jwt-operator mount and the token store aside. It reads the
 * spec only, proves nothing about the roles or accounts, and never holds anything up.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../apis/openbaocluster-names.js";
import type { Readiness } from "./contract.js";

const OPERATOR_MOUNT = "jwt-operator";
const USER_METHODS = new Set(["jwt", "kubernetes", "userpass", "ldap", "oidc", "approle", "cert"]);

function userMount(req: { path?: string; authMethod?: { type?: string } }): string | undefined {
  const parts = (req.path ?? "")
    .toLowerCase()
    .replace(/^\/+|\/+$/g, "")
    .split("/");
  if (parts[0] === "auth") {
    const mount = parts[1];
    return mount && mount !== OPERATOR_MOUNT && mount !== "token" ? `auth/${mount}` : undefined;
  }
  if (parts[0] === "sys" && parts[1] === "auth") {
    const mount = parts[2];
    const type = req.authMethod?.type?.trim().toLowerCase() ?? "";
    return mount && mount !== OPERATOR_MOUNT && USER_METHODS.has(type) ? `auth/${mount}` : undefined;
  }
  return undefined;
}

export function userAccessBootstrap(c: OpenBaoCluster): Readiness {
  const selfInit = c.spec.selfInit;
  if (selfInit?.enabled !== true)
    return {
      status: "False",
      reason: R.Disabled,
      message: "self-init is off: the operator does not guess how people log in",
    };
  const requests = (selfInit.requests ?? []) as { path?: string; authMethod?: { type?: string } }[];
  const mounts = [...new Set(requests.map(userMount).filter((m): m is string => m !== undefined))].sort();
  if (mounts.length === 0)
    return {
      status: "Unknown",
      reason: R.UserAccessUnverified,
      message:
        "no self-init request sets up an auth method for people (selfInit.oidc is the operator's own login): make sure one does, with the roles or accounts they need",
    };
  return {
    status: "True",
    reason: R.UserAccessConfigured,
    message: `self-init requests appear to set up logins on ${mounts.join(", ")} (a best-effort reading of the spec; check the roles and accounts)`,
  };
}
