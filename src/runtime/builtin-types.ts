import type { ResourceType } from "./types.js";

/** Kubernetes' own kinds that the runtime, the targets, the CLI and the tests address. */
export const NAMESPACE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};
export const CONFIGMAP: ResourceType = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};
export const SERVICE_ACCOUNT: ResourceType = {
  group: "",
  version: "v1",
  kind: "ServiceAccount",
  plural: "serviceaccounts",
  namespaced: true,
};
export const CUSTOM_RESOURCE_DEFINITION: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  kind: "CustomResourceDefinition",
  plural: "customresourcedefinitions",
  namespaced: false,
};
export const LEASE: ResourceType = {
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
};
export const EVENTS_V1: ResourceType = {
  group: "events.k8s.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
};
export const POD: ResourceType = { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true };
export const SECRET: ResourceType = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};
export const VALIDATING_WEBHOOK_CONFIGURATION: ResourceType = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "ValidatingWebhookConfiguration",
  plural: "validatingwebhookconfigurations",
  namespaced: false,
};
export const VALIDATING_ADMISSION_POLICY: ResourceType = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "ValidatingAdmissionPolicy",
  plural: "validatingadmissionpolicies",
  namespaced: false,
};
export const VALIDATING_ADMISSION_POLICY_BINDING: ResourceType = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "ValidatingAdmissionPolicyBinding",
  plural: "validatingadmissionpolicybindings",
  namespaced: false,
};
export const ROLE: ResourceType = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  kind: "Role",
  plural: "roles",
  namespaced: true,
};
export const ROLE_BINDING: ResourceType = { ...ROLE, kind: "RoleBinding", plural: "rolebindings" };
export const RESOURCE_QUOTA: ResourceType = {
  group: "",
  version: "v1",
  kind: "ResourceQuota",
  plural: "resourcequotas",
  namespaced: true,
};
export const LIMIT_RANGE: ResourceType = { ...RESOURCE_QUOTA, kind: "LimitRange", plural: "limitranges" };
export const JOB: ResourceType = {
  group: "batch",
  version: "v1",
  kind: "Job",
  plural: "jobs",
  namespaced: true,
};
export const STATEFULSET: ResourceType = {
  group: "apps",
  version: "v1",
  kind: "StatefulSet",
  plural: "statefulsets",
  namespaced: true,
};
export const PERSISTENT_VOLUME_CLAIM: ResourceType = {
  group: "",
  version: "v1",
  kind: "PersistentVolumeClaim",
  plural: "persistentvolumeclaims",
  namespaced: true,
};
export const SERVICE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
};
export const ENDPOINT_SLICE: ResourceType = {
  group: "discovery.k8s.io",
  version: "v1",
  kind: "EndpointSlice",
  plural: "endpointslices",
  namespaced: true,
};
