import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { Component, type ComponentName } from "../../src/targets/openbao/identity.js";
import { unsupportedFields } from "../../src/targets/openbao/unsupported.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";
import { DEFAULT_POD_SECURITY_CONTEXT } from "../../src/targets/openbao/workload/statefulsets/security-context.js";
import { POD_SECURITY } from "../fixtures/openbao/pod-fields.js";

// Upstream 0.5's fields of the OpenBao pods themselves, on the StatefulSets the operator builds:
// spec.securityContext over the operator's defaults.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

// biome-ignore lint/suspicious/noExplicitAny: tests spell out spec fields freely
const cluster = (spec: Record<string, any> = {}): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, readReplicas: { replicas: 1 }, ...spec },
  }) as unknown as OpenBaoCluster;

const runtime = { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] };
const built = (c: OpenBaoCluster, component: ComponentName = Component.Server): Json =>
  buildStatefulSet(c, { component, replicas: 1, configHash: "h1", clusterDomain: "cluster.local", runtime });
const BOTH = [Component.Server, Component.ReadReplica];

describe("spec.securityContext on the OpenBao pods", () => {
  it("without it, voters and read replicas run with the operator's hardened defaults", () => {
    for (const component of BOTH) {
      const pod = built(cluster(), component).spec.template.spec;
      assert.deepEqual(pod.securityContext, DEFAULT_POD_SECURITY_CONTEXT, component);
      assert.deepEqual(pod.containers[0].securityContext, {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: false,
        capabilities: { drop: ["ALL"] },
      });
    }
  });

  it("every field set replaces the default on voters and read replicas; the container keeps its own", () => {
    for (const component of BOTH) {
      const pod = built(cluster({ securityContext: POD_SECURITY }), component).spec.template.spec;
      assert.deepEqual(pod.securityContext, POD_SECURITY, component);
      assert.equal(pod.containers[0].securityContext.allowPrivilegeEscalation, false);
      assert.deepEqual(pod.containers[0].securityContext.capabilities, { drop: ["ALL"] });
    }
  });

  it("a partial one keeps the defaults of the fields it leaves out", () => {
    const pod = built(cluster({ securityContext: { runAsUser: 2000, fsGroup: 4000 } })).spec.template.spec;
    assert.deepEqual(pod.securityContext, {
      ...DEFAULT_POD_SECURITY_CONTEXT,
      runAsUser: 2000,
      fsGroup: 4000,
    });
  });

  it("workloadHardening.appArmorEnabled sets RuntimeDefault over the spec's AppArmor profile", () => {
    const pod = built(
      cluster({ securityContext: POD_SECURITY, workloadHardening: { appArmorEnabled: true } }),
    ).spec.template.spec;
    assert.deepEqual(pod.securityContext.appArmorProfile, { type: "RuntimeDefault" });
    assert.equal(pod.securityContext.runAsUser, 2000);
  });

  it("the built pod shares nothing with the spec (a later edit of one cannot change the other)", () => {
    const c = cluster({ securityContext: structuredClone(POD_SECURITY) });
    const pod = built(c).spec.template.spec;
    pod.securityContext.supplementalGroups.push(0);
    pod.securityContext.seccompProfile.type = "Unconfined";
    assert.deepEqual(c.spec.securityContext, POD_SECURITY);
    assert.deepEqual(built(cluster()).spec.template.spec.securityContext, DEFAULT_POD_SECURITY_CONTEXT);
  });

  it("is acted on: UnsupportedFields no longer names it", () => {
    assert.deepEqual(unsupportedFields({ securityContext: POD_SECURITY }), []);
  });
});
