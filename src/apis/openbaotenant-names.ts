/**
 * OpenBaoTenant's names and the constants its provisioner uses, without the schema (see
 * `openbaocluster-names.ts`); `openbaotenant.ts` re-exports all of it.
 */
import { reasonTable } from "./reason.js";

export const OpenBaoTenantKind = "OpenBaoTenant";
export const OpenBaoTenantPlural = "openbaotenants";

/** Upstream's finalizer: the tenant's Roles and RoleBindings are removed before the object goes. */
export const OpenBaoTenantFinalizer = "openbao.org/openbaotenant-finalizer";

export const OpenBaoTenantCondition = {
  /** Upstream's only condition; it sets it on a refused tenant, this project on every outcome. */
  Provisioned: "Provisioned",
} as const;
export type OpenBaoTenantConditionType = (typeof OpenBaoTenantCondition)[keyof typeof OpenBaoTenantCondition];

export const OpenBaoTenantReason = reasonTable<typeof OpenBaoTenantKind>()({
  /** Upstream's reason: a tenant outside the operator's namespace names another namespace. */
  SecurityViolation: "SecurityViolation",
  /** A system namespace or the operator's own: never handed to a tenant. */
  NamespaceNotAllowed: "NamespaceNotAllowed",
  TargetNamespaceNotFound: "TargetNamespaceNotFound",
  Provisioned: "Provisioned",
  ProvisioningFailed: "ProvisioningFailed",
  /** Deleting: OpenBaoClusters remain in the target namespace, so its access stays. */
  ClustersRemain: "ClustersRemain",
  /** Deleted: the Roles and RoleBindings are gone (an event). */
  Offboarded: "Offboarded",
});
export type OpenBaoTenantReasonType = (typeof OpenBaoTenantReason)[keyof typeof OpenBaoTenantReason];

/** The controller and the field manager that write OpenBaoTenant objects and what they provision. */
export const OpenBaoTenantManagers = {
  controller: "openbaotenant",
  fieldManager: "platform-operator-openbao-tenant",
} as const;
