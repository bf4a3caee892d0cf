/** The slice of Kubernetes object shape the runtime relies on; kinds add their own spec and status. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** Enough to address a resource over REST. `namespaced` decides whether a namespace segment appears. */
export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

export const apiVersionOf = (t: Pick<ResourceType, "group" | "version">): string =>
  t.group === "" ? t.version : `${t.group}/${t.version}`;

/** `namespace/name`, or `name` for cluster-scoped objects: the key the work queue carries. */
export function objectKey(o: { metadata: ObjectMeta }): string {
  const ns = o.metadata.namespace;
  return ns ? `${ns}/${o.metadata.name}` : (o.metadata.name ?? "");
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf("/");
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
