import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";

// The in-memory OpenBaoCluster and runtime pieces the StatefulSet builder's unit tests start from:
// one voter set with a read replica, a small volume, and a runtime that mounts nothing.

/** OpenBaoCluster `demo` in `ns`, with `spec` spread over its defaults. */
// biome-ignore lint/suspicious/noExplicitAny: tests spell out spec fields freely
export const demoCluster = (spec: Record<string, any> = {}): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, readReplicas: { replicas: 1 }, ...spec },
  }) as unknown as OpenBaoCluster;

/** The runtime the builder is given: `bao server`, no volumes of its own. */
export const DEMO_RUNTIME = { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] };
