import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { ConfigError } from "../../src/runtime/target.js";
import { buildExecutorJob } from "../../src/targets/openbao/adminops/jobs/build.js";
import { buildHookJob } from "../../src/targets/openbao/adminops/upgrade/bluegreen/hook.js";
import type { BlueGreenStatus } from "../../src/targets/openbao/adminops/upgrade/bluegreen/types.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import type { ExecutorJob } from "../../src/targets/openbao/executor/contract.js";
import { Component, type ComponentName } from "../../src/targets/openbao/identity.js";
import { type Platform, platformOf } from "../../src/targets/openbao/platform.js";
import { resolvePlatform } from "../../src/targets/openbao/platform-detect.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";
import { podSecurityContext } from "../../src/targets/openbao/workload/statefulsets/security-context.js";
import { DEMO_RUNTIME, demoCluster } from "../support/openbao-demo.js";

// The openbao target's `platform` setting: on OpenShift the OpenBao pods and the Jobs' pods name no
// uid, gid or fsGroup (the SCC assigns them); on Kubernetes, the default, every pod template stays
// byte for byte what it was before the setting existed, so an operator upgrade rolls nothing.

// biome-ignore lint/suspicious/noExplicitAny: built manifests are read loosely in tests
type Json = Record<string, any>;

const IDS = ["runAsUser", "runAsGroup", "fsGroup"];

const cluster = demoCluster;
const runtime = DEMO_RUNTIME;
const sts = (c: OpenBaoCluster, component: ComponentName, platform?: Platform): Json =>
  buildStatefulSet(c, {
    component,
    replicas: 1,
    configHash: "h1",
    clusterDomain: "cluster.local",
    runtime,
    ...(platform ? { platform } : {}),
  });
const BOTH = [Component.Server, Component.ReadReplica];

const contract: ExecutorJob = {
  operation: "backup",
  openbao: { address: "https://demo-active.ns.svc:8200", caSecretName: "demo-tls-server" },
  auth: { method: "jwt", role: "backup", audience: "openbao-internal" },
  store: { provider: "s3", bucket: "b", key: "p/ns/demo/x.snap", credentialsSecretName: "creds" },
};
const executorJob = (c: OpenBaoCluster, component: ComponentName, platform?: Platform): Json =>
  buildExecutorJob({
    cluster: c,
    name: `demo-${component}-1`,
    component,
    image: "localhost/platform-operator:dev",
    contract,
    serviceAccountName: `demo-${component}`,
    ...(platform ? { platform } : {}),
  });
const bg = {
  phase: "Syncing",
  operationID: "1",
  greenRevision: "2-7-2-abcde",
  greenVersion: "2.7.2",
} as BlueGreenStatus;
const hookJob = (c: OpenBaoCluster, platform?: Platform): Json =>
  buildHookJob(c, bg, { image: "busybox:1" }, "cluster.local", platform);

describe("openbao platform: configuration", () => {
  const parse = (platform: unknown) => parseOpenBaoConfig({ platform }, "targets.openbao");

  it("takes auto, kubernetes and openshift; unset is auto, recorded as nothing", () => {
    assert.equal(parseOpenBaoConfig({}, "targets.openbao").platform, undefined);
    assert.equal(parse("auto").platform, undefined);
    assert.equal(parse("kubernetes").platform, "kubernetes");
    assert.equal(parse("openshift").platform, "openshift");
  });

  it("refuses anything else, naming targets.openbao.platform and the values allowed", () => {
    for (const bad of ["OpenShift", "okd", "", 1, true, ["openshift"]]) {
      assert.throws(
        () => parse(bad),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.field === "targets.openbao.platform" &&
          (bad === "" || typeof bad !== "string" || /auto, kubernetes, openshift/.test(e.message)),
        JSON.stringify(bad),
      );
    }
  });

  it("an undecided (auto) configuration builds for Kubernetes", () => {
    assert.equal(platformOf({}), "kubernetes");
    assert.equal(platformOf({ platform: "auto" }), "kubernetes");
    assert.equal(platformOf({ platform: "kubernetes" }), "kubernetes");
    assert.equal(platformOf({ platform: "openshift" }), "openshift");
  });
});

describe("openbao platform: auto is decided from the served API groups", () => {
  const served = (groups: string[]) => ({
    calls: 0,
    async servedGroups() {
      this.calls++;
      return groups;
    },
  });

  it("openshift when security.openshift.io is served, kubernetes when not", async () => {
    const ocp = served(["apps", "security.openshift.io", "route.openshift.io"]);
    assert.deepEqual(await resolvePlatform(ocp, undefined), { platform: "openshift", detected: true });
    assert.deepEqual(await resolvePlatform(ocp, "auto"), { platform: "openshift", detected: true });
    const k8s = served(["apps", "openshift.io.example.com", "batch"]);
    assert.deepEqual(await resolvePlatform(k8s, "auto"), { platform: "kubernetes", detected: true });
  });

  it("an explicit setting is taken as it is, without asking", async () => {
    const ocp = served(["security.openshift.io"]);
    assert.deepEqual(await resolvePlatform(ocp, "kubernetes"), { platform: "kubernetes", detected: false });
    const k8s = served([]);
    assert.deepEqual(await resolvePlatform(k8s, "openshift"), { platform: "openshift", detected: false });
    assert.equal(ocp.calls + k8s.calls, 0);
  });

  it("a discovery that fails stops the start naming the field, instead of guessing", async () => {
    const broken = {
      servedGroups: async (): Promise<string[]> => {
        throw new Error("connection refused");
      },
    };
    await assert.rejects(
      resolvePlatform(broken, "auto"),
      /^Error: targets\.openbao\.platform: .*connection refused/,
    );
  });
});

describe("openbao platform: the OpenBao pods' security context", () => {
  it("on openshift names no uid, gid or fsGroup and keeps the rest of the defaults", () => {
    assert.deepEqual(podSecurityContext(cluster(), "openshift"), {
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    for (const component of BOTH) {
      const pod = sts(cluster(), component, "openshift").spec.template.spec;
      for (const k of IDS) assert.equal(k in pod.securityContext, false, `${component} ${k}`);
      assert.equal(pod.securityContext.runAsNonRoot, true);
    }
  });

  it("on openshift, what spec.securityContext sets still applies, and appArmor too", () => {
    const c = cluster({
      securityContext: { runAsUser: 1000680000, fsGroup: 1000680000, seLinuxOptions: { level: "s0:c26,c5" } },
      workloadHardening: { appArmorEnabled: true },
    });
    assert.deepEqual(podSecurityContext(c, "openshift"), {
      runAsNonRoot: true,
      runAsUser: 1000680000,
      fsGroup: 1000680000,
      seLinuxOptions: { level: "s0:c26,c5" },
      seccompProfile: { type: "RuntimeDefault" },
      appArmorProfile: { type: "RuntimeDefault" },
    });
  });

  it("on kubernetes the pod templates are byte for byte those built without a platform", () => {
    for (const spec of [
      {},
      { securityContext: { runAsUser: 2000 } },
      { workloadHardening: { appArmorEnabled: true } },
    ])
      for (const component of BOTH)
        assert.equal(
          JSON.stringify(sts(cluster(spec), component, "kubernetes")),
          JSON.stringify(sts(cluster(spec), component)),
          `${component} ${JSON.stringify(spec)}`,
        );
    // And the pod's security context is still the one running clusters have, in the same key order.
    assert.equal(
      JSON.stringify(sts(cluster(), Component.Server, "kubernetes").spec.template.spec.securityContext),
      '{"runAsNonRoot":true,"runAsUser":100,"runAsGroup":1000,"fsGroup":1000,"seccompProfile":{"type":"RuntimeDefault"}}',
    );
  });
});

describe("openbao platform: the Jobs' pods (backup, restore, pre-upgrade snapshot, hook)", () => {
  const jobs = (platform?: Platform): [string, Json][] => [
    ["backup", executorJob(cluster(), Component.Backup, platform)],
    ["restore", executorJob(cluster(), Component.Restore, platform)],
    ["upgrade", executorJob(cluster(), Component.Upgrade, platform)],
    ["hook", hookJob(cluster(), platform)],
  ];

  it("on openshift name no uid, gid or fsGroup; still non-root with RuntimeDefault seccomp", () => {
    for (const [what, job] of jobs("openshift")) {
      const sc = job["spec"].template.spec.securityContext;
      for (const k of IDS) assert.equal(k in sc, false, `${what} ${k}`);
      assert.equal(sc.runAsNonRoot, true, what);
      assert.deepEqual(sc.seccompProfile, { type: "RuntimeDefault" }, what);
    }
  });

  it("on kubernetes pin the operator image's user, and are byte for byte those built without a platform", () => {
    const unset = jobs();
    for (const [i, [what, job]] of jobs("kubernetes").entries()) {
      assert.equal(JSON.stringify(job), JSON.stringify(unset[i]![1]), what);
      const sc = job["spec"].template.spec.securityContext;
      assert.equal(sc.runAsUser, 65532, what);
      assert.equal(sc.runAsGroup, 65532, what);
      // The executor writes into its volumes; the hook's image is the user's and gets no fsGroup.
      assert.equal(sc.fsGroup, what === "hook" ? undefined : 65532, what);
    }
  });
});
