/**
 * VaultSeed's names and the constants the controller uses, without the schema: the operator's run
 * path imports these, and so never loads TypeBox (about 7 MiB of RSS), which only the CRD builder and
 * offline validation need.
 */
import { reasonTable } from "./reason.js";

export const VaultSeedGroup = "ohmlab.fr";
export const VaultSeedVersion = "v1alpha1";
export const VaultSeedApiVersion = `${VaultSeedGroup}/${VaultSeedVersion}` as const;
export const VaultSeedKind = "VaultSeed";
export const VaultSeedPlural = "vaultseeds";

export const VaultSeedCondition = {
  Ready: "Ready",
  Reconciling: "Reconciling",
  Stalled: "Stalled",
  Drifted: "Drifted",
} as const;
export type VaultSeedConditionType = (typeof VaultSeedCondition)[keyof typeof VaultSeedCondition];

export const VaultSeedReason = reasonTable<typeof VaultSeedKind>()({
  Reconciled: "Reconciled",
  RefPending: "RefPending",
  RefCycle: "RefCycle",
  InvalidSpec: "InvalidSpec",
  InvalidRotation: "InvalidRotation",
  OwnedByAnother: "OwnedByAnother",
  Forbidden: "Forbidden",
  BackendUnavailable: "BackendUnavailable",
  ObserveOnly: "ObserveOnly",
  // Not in the document; named here because the document has no reason for these states.
  /** Stalled: the path's mount does not exist. */
  MountNotFound: "MountNotFound",
  /** Stalled: the path's mount is not KV version 2 (KV version 1, or another engine). */
  UnsupportedMount: "UnsupportedMount",
  /** Stalled: OpenBao refused the request as invalid (HTTP 4xx); the message carries its reason. */
  BackendRejected: "BackendRejected",
  /** Ready=False, Reconciling: a path written moments ago without an owner marker is not adopted yet. */
  AdoptionPending: "AdoptionPending",
  /** Reconciling: the object could not be handled at all (retried with backoff); the message says why. */
  ReconcileFailed: "ReconcileFailed",
  Deleted: "Deleted",
});
export type VaultSeedReasonType = (typeof VaultSeedReason)[keyof typeof VaultSeedReason];

/**
 * The reasons of the events a write records, named by its most telling action. Apart from the
 * condition reasons because they never stand on a condition (the not-ready gauge lists those).
 */
export const VaultSeedEventReason = reasonTable<typeof VaultSeedKind>()({
  Adopted: "Adopted",
  Wrote: "Wrote",
  Rotated: "Rotated",
  Pruned: "Pruned",
});
export type VaultSeedEventReasonType = (typeof VaultSeedEventReason)[keyof typeof VaultSeedEventReason];

export const DeletionPolicies = ["Retain", "Delete"] as const;
export type VaultSeedDeletionPolicy = (typeof DeletionPolicies)[number];

/** The controller and the field manager that write VaultSeed objects. */
export const VaultSeedManagers = {
  controller: "vaultseed",
  fieldManager: "vaultseed-controller",
} as const;
