import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { InventoryItem } from "../../src/runtime/prune.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { compareInventoryItems } from "../../src/targets/gitlab/prune/index.js";
import { splitManifests } from "../../src/targets/gitlab/render/index.js";
import {
  compareKinds,
  INSTALL_ORDER,
  type KindOrder,
  UNINSTALL_ORDER,
} from "../../src/targets/gitlab/render/kind-order.js";

// The facts, read from helm's source at its tags (kind lists only):
// Helm 3: pkg/releaseutil/kind_sorter.go at v3.21.4 (the same on the dev-v3 branch, Aug 2026).
// Helm 4: pkg/release/v1/util/kind_sorter.go at v4.0.0, v4.1.0 and v4.2.4 (all three the same).
// GitLab's operator renders GitLabCore with the Helm 4 SDK (internal/render imports
// helm.sh/helm/v4/pkg/release/v1/util and sorts objects and hooks by its InstallOrder), so Helm 4
// is the order to match. Both sorters: listed kinds by place, unlisted kinds after them by kind name
// (Go's byte comparison), equal kinds in the order rendered (template path, then place in the file).
const HELM3_INSTALL = [
  "PriorityClass",
  "Namespace",
  "NetworkPolicy",
  "ResourceQuota",
  "LimitRange",
  "PodSecurityPolicy",
  "PodDisruptionBudget",
  "ServiceAccount",
  "Secret",
  "SecretList",
  "ConfigMap",
  "StorageClass",
  "PersistentVolume",
  "PersistentVolumeClaim",
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleList",
  "ClusterRoleBinding",
  "ClusterRoleBindingList",
  "Role",
  "RoleList",
  "RoleBinding",
  "RoleBindingList",
  "Service",
  "DaemonSet",
  "Pod",
  "ReplicationController",
  "ReplicaSet",
  "Deployment",
  "HorizontalPodAutoscaler",
  "StatefulSet",
  "Job",
  "CronJob",
  "IngressClass",
  "Ingress",
  "APIService",
];
const HELM3_UNINSTALL = [
  "APIService",
  "Ingress",
  "IngressClass",
  "Service",
  "CronJob",
  "Job",
  "StatefulSet",
  "HorizontalPodAutoscaler",
  "Deployment",
  "ReplicaSet",
  "ReplicationController",
  "Pod",
  "DaemonSet",
  "RoleBindingList",
  "RoleBinding",
  "RoleList",
  "Role",
  "ClusterRoleBindingList",
  "ClusterRoleBinding",
  "ClusterRoleList",
  "ClusterRole",
  "CustomResourceDefinition",
  "PersistentVolumeClaim",
  "PersistentVolume",
  "StorageClass",
  "ConfigMap",
  "SecretList",
  "Secret",
  "ServiceAccount",
  "PodDisruptionBudget",
  "PodSecurityPolicy",
  "LimitRange",
  "ResourceQuota",
  "NetworkPolicy",
  "Namespace",
  "PriorityClass",
];
const WEBHOOKS_INSTALL = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"];
const WEBHOOKS_UNINSTALL = ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"];
const HELM4_INSTALL = [...HELM3_INSTALL, ...WEBHOOKS_INSTALL];
const HELM4_UNINSTALL = [...WEBHOOKS_UNINSTALL, ...HELM3_UNINSTALL];

describe("Helm's kind orders (facts table)", () => {
  it("ours are Helm 4's install and uninstall lists, entry for entry", () => {
    assert.deepEqual([...INSTALL_ORDER], HELM4_INSTALL);
    assert.deepEqual([...UNINSTALL_ORDER], HELM4_UNINSTALL);
  });

  it("Helm 3 and Helm 4 differ only in the two webhook configuration kinds", () => {
    const only = (a: string[], b: string[]) => a.filter((k) => !b.includes(k));
    assert.deepEqual(only(HELM4_INSTALL, HELM3_INSTALL), WEBHOOKS_INSTALL);
    assert.deepEqual(only(HELM3_INSTALL, HELM4_INSTALL), []);
    assert.deepEqual(only(HELM4_UNINSTALL, HELM3_UNINSTALL), WEBHOOKS_UNINSTALL);
    // Every other kind keeps its place relative to the others in both directions.
    assert.deepEqual(
      HELM4_UNINSTALL.filter((k) => !k.endsWith("WebhookConfiguration")),
      HELM3_UNINSTALL,
    );
  });

  // Kinds a GitLab render mixes: listed ones, the two webhook kinds, and unlisted ones whose
  // byte order differs from a locale's (GRPCRoute sorts before Gateway in Go, after it in a locale).
  const mixed = [
    "ValidatingWebhookConfiguration",
    "HTTPRoute",
    "Gateway",
    "Deployment",
    "MutatingWebhookConfiguration",
    "GRPCRoute",
    "APIService",
    "ConfigMap",
    "ServiceMonitor",
    "Service",
    "PodMonitor",
  ];
  const table: { order: KindOrder; helm4: string[]; helm3: string[] }[] = [
    {
      order: "install",
      helm4: [
        "ConfigMap",
        "Service",
        "Deployment",
        "APIService",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "GRPCRoute",
        "Gateway",
        "HTTPRoute",
        "PodMonitor",
        "ServiceMonitor",
      ],
      helm3: [
        "ConfigMap",
        "Service",
        "Deployment",
        "APIService",
        "GRPCRoute",
        "Gateway",
        "HTTPRoute",
        "MutatingWebhookConfiguration",
        "PodMonitor",
        "ServiceMonitor",
        "ValidatingWebhookConfiguration",
      ],
    },
    {
      order: "uninstall",
      helm4: [
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "APIService",
        "Service",
        "Deployment",
        "ConfigMap",
        "GRPCRoute",
        "Gateway",
        "HTTPRoute",
        "PodMonitor",
        "ServiceMonitor",
      ],
      helm3: [
        "APIService",
        "Service",
        "Deployment",
        "ConfigMap",
        "GRPCRoute",
        "Gateway",
        "HTTPRoute",
        "MutatingWebhookConfiguration",
        "PodMonitor",
        "ServiceMonitor",
        "ValidatingWebhookConfiguration",
      ],
    },
  ];
  for (const row of table) {
    it(`${row.order}: the mixed kinds sort as Helm 4 does (Helm 3 differs only where the webhook kinds go)`, () => {
      const ours = [...mixed].sort((a, b) => compareKinds(a, b, row.order));
      assert.deepEqual(ours, row.helm4);
      const noWebhooks = (l: string[]) => l.filter((k) => !k.endsWith("WebhookConfiguration"));
      assert.deepEqual(noWebhooks(ours), noWebhooks(row.helm3));
    });
  }
});

const doc = (source: string, body: string) => `---\n# Source: gitlab/templates/${source}\n${body}\n`;
const obj = (source: string, apiVersion: string, kind: string, name: string) =>
  doc(source, `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}`);

describe("splitManifests sorts objects as Helm 4 does", () => {
  // As `helm template` (Helm 3) prints them: by Helm 3's kinds, each kind in template path order.
  const printed = [
    obj("a/svc.yaml", "v1", "Service", "gl-zeta"),
    obj("b/svc.yaml", "v1", "Service", "gl-alpha"),
    obj("web.yaml", "apps/v1", "Deployment", "gl-web"),
    obj("routes.yaml", "gateway.networking.k8s.io/v1", "GRPCRoute", "gl-grpc"),
    obj("gateway.yaml", "gateway.networking.k8s.io/v1", "Gateway", "gl-gw"),
    obj("mwc.yaml", "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "gl-m"),
    obj("vwc.yaml", "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "gl-v"),
  ].join("");
  const { objects } = splitManifests(printed, { releaseName: "gl", namespace: "team-a" });

  it("webhook configurations after the listed kinds, before unlisted ones; a kind's objects as rendered; unlisted kinds by bytes", () => {
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata.name}`),
      [
        "Service/gl-zeta",
        "Service/gl-alpha",
        "Deployment/gl-web",
        "MutatingWebhookConfiguration/gl-m",
        "ValidatingWebhookConfiguration/gl-v",
        "GRPCRoute/gl-grpc",
        "Gateway/gl-gw",
      ],
    );
  });
});

describe("prune and cleanup delete in Helm's kind order", () => {
  const type = (group: string, kind: string, namespaced: boolean): ResourceType =>
    ({ group, version: "v1", kind, plural: `${kind.toLowerCase()}s`, namespaced }) as ResourceType;
  const item = (group: string, kind: string, name: string, namespace?: string): InventoryItem => ({
    type: type(group, kind, namespace !== undefined),
    metadata: { name, ...(namespace ? { namespace } : {}) },
  });
  const items = [
    item("apps", "Deployment", "gl-web", "team-a"),
    item("", "ConfigMap", "gl-b", "team-a"),
    item("admissionregistration.k8s.io", "MutatingWebhookConfiguration", "gl-m"),
    item("gateway.networking.k8s.io", "GatewayClass", "gl-gc"),
    item("", "ConfigMap", "gl-a", "team-a"),
    item("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "gl-v"),
    item("", "Service", "gl-svc", "team-a"),
    item("scheduling.k8s.io", "PriorityClass", "gl-prio"),
  ];
  const sorted = (order: KindOrder) =>
    [...items]
      .sort((a, b) => compareInventoryItems(a, b, order))
      .map((i) => `${i.type.kind}/${i.metadata.name}`);

  it("uninstall (the finalizer): validating, then mutating webhooks first, then Helm's uninstall list, unlisted last", () => {
    assert.deepEqual(sorted("uninstall"), [
      "ValidatingWebhookConfiguration/gl-v",
      "MutatingWebhookConfiguration/gl-m",
      "Service/gl-svc",
      "Deployment/gl-web",
      "ConfigMap/gl-a",
      "ConfigMap/gl-b",
      "PriorityClass/gl-prio",
      "GatewayClass/gl-gc",
    ]);
  });

  it("install (a render that dropped objects, as a Helm upgrade deletes them: the old manifest's order)", () => {
    assert.deepEqual(sorted("install"), [
      "PriorityClass/gl-prio",
      "ConfigMap/gl-a",
      "ConfigMap/gl-b",
      "Service/gl-svc",
      "Deployment/gl-web",
      "MutatingWebhookConfiguration/gl-m",
      "ValidatingWebhookConfiguration/gl-v",
      "GatewayClass/gl-gc",
    ]);
  });
});
