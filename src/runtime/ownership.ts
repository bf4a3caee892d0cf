import type { KubeObject, OwnerReference } from "./types.js";

/** A kind without its version: owner references stay valid across an owner's API versions. */
export interface GroupKind {
  group: string;
  kind: string;
}

/** An owner as the owner index knows it. */
export interface OwnerId extends GroupKind {
  uid: string;
}

/** The group of an apiVersion: "apps/v1" -> "apps", "v1" -> "" (the core group). */
export function groupOf(apiVersion: string): string {
  // Tolerant of a malformed reference: object content must never throw inside an informer.
  const v = typeof apiVersion === "string" ? apiVersion : "";
  const i = v.indexOf("/");
  return i < 0 ? "" : v.slice(0, i);
}

/** The owner index key: group, kind and uid, so two kinds of one name in different groups never mix. */
export function ownerIndexKey(owner: OwnerId): string {
  return `${owner.group}/${owner.kind}/${owner.uid}`;
}

export function refIndexKey(ref: OwnerReference): string {
  return ownerIndexKey({ group: groupOf(ref.apiVersion), kind: ref.kind, uid: ref.uid });
}

/** The reference marked `controller: true`, if any: there is at most one per object. */
export function controllerRefOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** Thrown when an object already has a controller other than the one being set. */
export class AlreadyOwnedError extends Error {
  constructor(
    readonly object: string,
    readonly existing: OwnerReference,
    readonly wanted: OwnerReference,
  ) {
    super(
      `${object}: metadata.ownerReferences already names a controller, ${existing.kind} ` +
        `${existing.name} (${existing.apiVersion}, uid ${existing.uid}); refusing to make ` +
        `${wanted.kind} ${wanted.name} (${wanted.apiVersion}) a second controller`,
    );
    this.name = "AlreadyOwnedError";
  }
}

function describe(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return `${obj.kind ?? "object"} ${ns ? `${ns}/` : ""}${obj.metadata.name ?? "(no name)"}`;
}

/** The reference an owner gives its children; every field the API server requires is checked. */
export function ownerReferenceFor(owner: KubeObject, controller: boolean): OwnerReference {
  const where = `owner ${describe(owner)}`;
  if (!owner.apiVersion) throw new Error(`${where}: apiVersion is empty; an owner reference needs it`);
  if (!owner.kind) throw new Error(`${where}: kind is empty; an owner reference needs it`);
  if (owner.kind === "PartialObjectMetadata")
    throw new Error(
      `${where}: a metadata-only object does not say its own kind; take the owner from a full informer or a get`,
    );
  if (!owner.metadata.name) throw new Error(`${where}: metadata.name is empty; an owner reference needs it`);
  if (!owner.metadata.uid)
    throw new Error(`${where}: metadata.uid is empty; use the object as read from the API server`);
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    ...(controller ? { controller: true, blockOwnerDeletion: true } : {}),
  };
}

/**
 * The API server's garbage collector only follows references it can resolve: a namespaced owner
 * must be in the child's namespace, and a cluster-scoped child cannot have a namespaced owner.
 */
function checkScope(owner: KubeObject, child: KubeObject): void {
  const ons = owner.metadata.namespace;
  const cns = child.metadata.namespace;
  if (ons && !cns)
    throw new Error(
      `${describe(child)}: a cluster-scoped object cannot be owned by the namespaced ${describe(owner)}`,
    );
  if (ons && cns && ons !== cns)
    throw new Error(
      `${describe(child)}: metadata.namespace ${cns} differs from its owner's (${describe(owner)}); ` +
        "owner references cannot cross namespaces",
    );
}

const sameOwner = (a: OwnerReference, b: OwnerReference): boolean =>
  a.uid === b.uid && a.kind === b.kind && groupOf(a.apiVersion) === groupOf(b.apiVersion);

/**
 * Makes `owner` the controller of `child` (in place, and returns child): the reference carries
 * apiVersion, kind, name, uid, `controller: true` and `blockOwnerDeletion: true`. Setting the same
 * owner again updates its reference; a different existing controller is an {@link AlreadyOwnedError}.
 */
export function setControllerReference<T extends KubeObject>(owner: KubeObject, child: T): T {
  const ref = ownerReferenceFor(owner, true);
  checkScope(owner, child);
  const refs = child.metadata.ownerReferences ?? [];
  const existing = refs.find((r) => r.controller === true);
  if (existing && !sameOwner(existing, ref)) throw new AlreadyOwnedError(describe(child), existing, ref);
  child.metadata.ownerReferences = [...refs.filter((r) => !sameOwner(r, ref)), ref];
  return child;
}

/** Adds `owner` as a non-controlling owner (garbage collection only); an existing entry is updated. */
export function setOwnerReference<T extends KubeObject>(owner: KubeObject, child: T): T {
  const ref = ownerReferenceFor(owner, false);
  checkScope(owner, child);
  const refs = child.metadata.ownerReferences ?? [];
  const existing = refs.find((r) => sameOwner(r, ref));
  const merged = existing?.controller ? { ...ref, controller: true, blockOwnerDeletion: true } : ref;
  child.metadata.ownerReferences = [...refs.filter((r) => !sameOwner(r, ref)), merged];
  return child;
}

/** Whether `owner` (group, kind, uid) is `obj`'s controller. */
export function isControlledBy(obj: KubeObject, owner: OwnerId): boolean {
  const ref = controllerRefOf(obj);
  return !!ref && ref.uid === owner.uid && ref.kind === owner.kind && groupOf(ref.apiVersion) === owner.group;
}
