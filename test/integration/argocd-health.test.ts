import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { GitLabCore } from "../../src/apis/gitlabcore.js";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../src/apis/openbaocluster-names.js";
import { type OpenBaoRestore, OpenBaoRestoreKind } from "../../src/apis/openbaorestore.js";
import { argocdCmData } from "../../src/cli/argocd.js";
import { applyAny } from "../../src/runtime/apply.js";
import { CONFIGMAP, JOB, SECRET, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import type { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import type { Rendered, RenderedObject } from "../../src/targets/gitlab/apply/rendered.js";
import type { ReleaseSource } from "../../src/targets/gitlab/reconciler.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import { decide } from "../../src/targets/openbao/adminops/backup/schedule.js";
import type { BreakGlassStatus } from "../../src/targets/openbao/adminops/upgrade/bluegreen/types.js";
import { setUpgrading } from "../../src/targets/openbao/adminops/upgrade/core/condition.js";
import { OPENBAOCLUSTER, refOf } from "../../src/targets/openbao/cluster-ref.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { driftedCondition } from "../../src/targets/openbao/observe.js";
import { writeAdminOpsConcern } from "../../src/targets/openbao/opslifecycle/index.js";
import { executorRestoreJobs } from "../../src/targets/openbao/restore/defaults.js";
import type { SnapshotHead } from "../../src/targets/openbao/restore/ports.js";
import { RestoreReconciler } from "../../src/targets/openbao/restore/reconciler.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { nextStatus, type PassResult } from "../../src/targets/openbao/status.js";
import { applyWorkloadStatus } from "../../src/targets/openbao/status-apply.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { type ArgoCdLua, ensureArgoCdLua } from "../../src/testenv/argocd-lua.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { finishExecutorJob } from "../support/executor-job.js";
import {
  applyGitLab,
  conditionOf,
  gitlabCore,
  installGitLabCrds,
  type RunningGitLab,
  startGitLabTarget,
  waitForGitLab,
} from "../support/gitlab.js";
import { clientFor, eventually, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import {
  applySeed,
  getSeed,
  type RunningTarget,
  seed,
  startVaultTarget,
  vaultSuite,
  waitForReason,
} from "../support/vault.js";

// The chart's Argo CD health checks and actions, run by the Lua VM Argo CD embeds (gopher-lua, built
// from its module by the test environment, called as Argo CD's util/lua calls it) on objects read
// back from the real API server. VaultSeed, GitLabCore and OpenBaoRestore states come from their
// real controllers; OpenBaoCluster states need OpenBao pods, so their status is written by the
// controller's own status code (nextStatus and applyWorkloadStatus for the workload plane,
// setUpgrading and writeAdminOpsConcern for the AdminOps plane), on the real status subresource.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const CHART_SCRIPTS = join(ROOT, "deploy/chart/platform-operator/argocd");
const PATCH_FILE = join(ROOT, "deploy/argocd/argocd-cm-patch.yaml");
const HOLD = "argocd-health.test/hold";

interface Health {
  status: string;
  message?: string;
}

/**
 * The scripts as Argo CD gets them: the checked-in argocd-cm patch, merged into a real argocd-cm
 * ConfigMap, read back, and laid out again as <group>_<Kind>/health.lua and actions/ files.
 */
async function scriptsFromArgoCdCm(client: KubeClient): Promise<string> {
  const patch = parse(readFileSync(PATCH_FILE, "utf8")) as { data: Record<string, string> };
  assert.deepEqual(
    patch.data,
    argocdCmData(CHART_SCRIPTS),
    "deploy/argocd is stale: run npm run argocd:write",
  );
  const ns = await freshNamespace(client, "argo-cm");
  await client.create(CONFIGMAP, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "argocd-cm", namespace: ns },
    data: { "timeout.reconciliation": "180s" },
  });
  await client.mergePatch(CONFIGMAP, "argocd-cm", ns, patch);
  const data = (await client.get<KubeObject & { data: Record<string, string> }>(CONFIGMAP, "argocd-cm", ns))
    .data;
  assert.equal(data["timeout.reconciliation"], "180s", "the patch keeps argocd-cm's other keys");
  const dir = makeTempDir("argocd-cm");
  for (const [key, text] of Object.entries(data)) {
    const health = /^resource\.customizations\.health\.(.+)$/.exec(key)?.[1];
    const actions = /^resource\.customizations\.actions\.(.+)$/.exec(key)?.[1];
    if (health) {
      mkdirSync(join(dir, health), { recursive: true });
      writeFileSync(join(dir, health, "health.lua"), text);
    }
    if (actions) {
      // The shape Argo CD's ResourceActions reads: discovery.lua and named definitions.
      const a = parse(text) as {
        "discovery.lua": string;
        definitions: { name: string; "action.lua": string }[];
      };
      mkdirSync(join(dir, actions, "actions"), { recursive: true });
      writeFileSync(join(dir, actions, "actions", "discovery.lua"), a["discovery.lua"]);
      for (const d of a.definitions) {
        mkdirSync(join(dir, actions, "actions", d.name), { recursive: true });
        writeFileSync(join(dir, actions, "actions", d.name, "action.lua"), d["action.lua"]);
      }
    }
  }
  await client.delete(NAMESPACE, ns).catch(() => {});
  return dir;
}

describe("Argo CD health checks and actions, in gopher-lua, on objects from the API server", () => {
  let lua: ArgoCdLua;
  let client: KubeClient;
  let SCRIPTS = "";
  const health = async (key: string, obj: unknown): Promise<Health> =>
    (await lua.run("health", join(SCRIPTS, key, "health.lua"), obj)) as unknown as Health;
  /** Expect one status and a message matching `says` (the condition's own message, mostly). */
  const expect = async (key: string, obj: unknown, status: string, says: RegExp) => {
    const hs = await health(key, obj);
    assert.equal(hs.status, status, `${key}: ${JSON.stringify(hs)}`);
    assert.match(hs.message ?? "", says, `${key}: ${JSON.stringify(hs)}`);
  };
  /** Holds an object in deletion with a finalizer of the test's own, deletes it, and reads it back. */
  const deleting = async <T extends KubeObject>(type: ResourceType, name: string, ns: string): Promise<T> => {
    const cur = await client.get<T>(type, name, ns);
    await client.mergePatch(type, name, ns, {
      metadata: { finalizers: [...(cur.metadata.finalizers ?? []), HOLD] },
    });
    await client.delete(type, name, ns);
    return client.get<T>(type, name, ns);
  };
  const release = async (type: ResourceType, name: string, ns: string) => {
    const cur = await client.get<KubeObject>(type, name, ns).catch(() => undefined);
    if (!cur) return;
    const rest = (cur.metadata.finalizers ?? []).filter((f) => f !== HOLD);
    await client.mergePatch(type, name, ns, { metadata: { finalizers: rest.length ? rest : null } });
  };

  before(async () => {
    lua = await ensureArgoCdLua();
    client = clientFor(sharedEnv().kubeconfigPath);
    SCRIPTS = await scriptsFromArgoCdCm(client);
  });
  after(() => client.close());

  describe("VaultSeed (the vault controller)", () => {
    const KEY = "ohmlab.fr_VaultSeed";
    let ns: string;
    let target: RunningTarget | undefined;
    let observeNs: string;
    let observe: RunningTarget | undefined;

    before(async () => {
      ({ ns } = await vaultSuite("argo-vs"));
      target = await startVaultTarget(client, ns, { allowDelete: true });
      ({ ns: observeNs } = await vaultSuite("argo-vs-obs"));
      observe = await startVaultTarget(client, observeNs, { observeOnly: true });
    });
    after(async () => {
      await target?.stop();
      await observe?.stop();
      await release(VAULTSEED, "held", ns);
    });

    it("Ready is Healthy with the condition's message", async () => {
      await applySeed(client, seed(ns, "ready", { path: `secret/${ns}/ready`, data: { a: "literal" } }));
      const o = await waitForReason(client, ns, "ready", "Reconciled");
      await expect(KEY, o, "Healthy", /^Reconciled: /);
    });

    it("a missing reference (Reconciling, RefPending) is Missing, naming what it waits for", async () => {
      await applySeed(
        client,
        seed(ns, "pending", { path: `secret/${ns}/pending`, data: { a: `<ref:secret/${ns}/nothing#k>` } }),
      );
      const o = await waitForReason(client, ns, "pending", "RefPending");
      assert.equal(o.status?.conditions?.find((c) => c.type === "Reconciling")?.status, "True");
      await expect(KEY, o, "Missing", new RegExp(`^RefPending: waiting for .*secret/${ns}/nothing`));
    });

    it("Reconciling on a refusal it retries (Forbidden) is Progressing", async () => {
      // The namespace's role may write secret/<ns>/* only: anything else is refused and retried.
      await applySeed(client, seed(ns, "refused", { path: `secret/elsewhere-${ns}/x`, data: { a: "v" } }));
      const o = await waitForReason(client, ns, "refused", "Forbidden");
      assert.equal(o.status?.conditions?.find((c) => c.type === "Reconciling")?.status, "True");
      await expect(KEY, o, "Progressing", /^Forbidden: /);
    });

    it("Stalled is Degraded, and says why", async () => {
      // Two seeds whose values reference each other: a cycle no retry resolves.
      const a = `secret/${ns}/cycle-a`;
      const b = `secret/${ns}/cycle-b`;
      await applySeed(client, seed(ns, "cycle-a", { path: a, data: { k: `<ref:${b}#k>` } }));
      await applySeed(client, seed(ns, "cycle-b", { path: b, data: { k: `<ref:${a}#k>` } }));
      const o = await waitForReason(client, ns, "cycle-a", "RefCycle");
      assert.equal(o.status?.conditions?.find((c) => c.type === "Stalled")?.status, "True");
      await expect(KEY, o, "Degraded", /^RefCycle: .*cycle/);
    });

    it("observe-only (Drifted, Ready=False ObserveOnly) is Healthy, as the spec's sync waves need", async () => {
      await applySeed(
        client,
        seed(observeNs, "drift", { path: `secret/${observeNs}/drift`, data: { a: "<random:8>" } }),
      );
      const o = await waitForReason(client, observeNs, "drift", "ObserveOnly");
      assert.equal(o.status?.conditions?.find((c) => c.type === "Drifted")?.status, "True");
      await expect(KEY, o, "Healthy", /^ObserveOnly: observe-only: a real run would write: 1 create-path/);
    });

    it("an object being deleted is Progressing", async () => {
      await applySeed(client, seed(ns, "held", { path: `secret/${ns}/held`, data: { a: "v" } }));
      await waitForReason(client, ns, "held", "Reconciled");
      const o = await deleting(VAULTSEED, "held", ns);
      assert.ok(o.metadata.deletionTimestamp);
      await expect(KEY, o, "Progressing", /being deleted/);
      await release(VAULTSEED, "held", ns);
    });

    it("a status behind metadata.generation is Progressing even though Ready is True", async () => {
      await target?.stop();
      target = undefined;
      await applySeed(client, seed(ns, "ready", { path: `secret/${ns}/ready`, data: { a: "changed" } }));
      const o = await getSeed(client, ns, "ready");
      assert.equal(o.metadata.generation, 2);
      assert.equal(o.status?.observedGeneration, 1);
      assert.equal(o.status?.conditions?.find((c) => c.type === "Ready")?.status, "True");
      await expect(KEY, o, "Progressing", /status is for generation 1; .*generation 2/);
      // And an object no controller has seen yet.
      await applySeed(client, seed(ns, "new", { path: `secret/${ns}/new`, data: { a: "v" } }));
      await expect(KEY, await getSeed(client, ns, "new"), "Progressing", /waiting for the controller/);
    });
  });

  describe("GitLabCore (the gitlab controller, hand-written renders)", () => {
    const KEY = "apps.gitlab.com_GitLabCore";
    let ns: string;
    let observeNs: string;
    let op: RunningGitLab | undefined;
    let observer: RunningGitLab | undefined;
    const renders = new Map<string, Rendered>();
    const chart = { name: "gitlab", version: "1.0.0", appVersion: "17.0.0", digest: "fixed" };
    const cm = (name: string): RenderedObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name },
      data: { a: "1" },
    });
    const source = (): ReleaseSource => ({
      capabilities: async () => ({ kubeVersion: "v1.37.2", apiVersions: ["v1"] }),
      versions: async () => ["1.0.0"],
      render: async (req) => {
        const r = renders.get(req.releaseName);
        if (!r) throw new Error(`no render for ${req.releaseName}`);
        return structuredClone(r);
      },
    });
    const create = (namespace: string, name: string) =>
      applyGitLab(
        client,
        gitlabCore(namespace, name, {
          version: { type: "Static", version: "1.0.0" },
          hostname: "gitlab.example.com",
        }),
      );

    before(async () => {
      await installGitLabCrds(client, false);
      ns = await freshNamespace(client, "argo-gl");
      observeNs = await freshNamespace(client, "argo-gl-obs");
      op = await startGitLabTarget(sharedEnv().kubeconfigPath, ns, source, { requeueInterval: "1s" });
      observer = await startGitLabTarget(sharedEnv().kubeconfigPath, observeNs, source, {
        requeueInterval: "1s",
        observeOnly: true,
      });
    });
    after(async () => {
      await op?.stop();
      await observer?.stop();
      await release(GITLABCORE, "running", ns);
    });

    it("Running with every workload ready is Healthy", async () => {
      renders.set("running", { chart, hooks: [], objects: [cm("running-config")] });
      await create(ns, "running");
      const o = await waitForGitLab(
        client,
        ns,
        "running",
        (g) => g.status?.phase === "Running",
        "Running",
        120_000,
      );
      await expect(KEY, o, "Healthy", /^WorkloadsReady: /);
    });

    it("Preparing, waiting for a Deployment no kubelet runs here, is Progressing with what it waits for", async () => {
      const deployment: RenderedObject = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "webservice" },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "webservice" } },
          template: {
            metadata: { labels: { app: "webservice" } },
            spec: { containers: [{ name: "w", image: "localhost/none:1" }] },
          },
        },
      };
      renders.set("preparing", { chart, hooks: [], objects: [deployment] });
      await create(ns, "preparing");
      const o = await waitForGitLab(
        client,
        ns,
        "preparing",
        (g) => g.status?.phase === "Preparing" && conditionOf(g, "Available")?.reason === "WorkloadsNotReady",
        "Preparing",
        120_000,
      );
      await expect(KEY, o, "Progressing", /^Preparing: WorkloadsNotReady: .*waiting for workloads/);
    });

    it("Failed is Degraded with the stage that failed", async () => {
      renders.set("failed", {
        chart,
        hooks: [],
        objects: [
          { apiVersion: "widgets.example.com/v1", kind: "Widget", metadata: { name: "w" }, spec: {} },
        ],
      });
      await create(ns, "failed");
      const o = await waitForGitLab(
        client,
        ns,
        "failed",
        (g) => g.status?.phase === "Failed",
        "Failed",
        120_000,
      );
      await expect(KEY, o, "Degraded", /^Failed: ApplyFailed: .*Widget is not served/);
    });

    it("observe-only with changes to make (Drifted) is Suspended with what a real pass would do", async () => {
      renders.set("watched", { chart, hooks: [], objects: [cm("watched-config")] });
      await create(observeNs, "watched");
      const o = await waitForGitLab(
        client,
        observeNs,
        "watched",
        (g) => conditionOf(g, "Drifted")?.status === "True",
        "Drifted",
        120_000,
      );
      await expect(KEY, o, "Suspended", /^observe-only: chart 1\.0\.0: would apply 1: ConfigMap/);
    });

    it("being deleted is Progressing; a status behind the generation is Progressing", async () => {
      const o = await deleting<GitLabCore>(GITLABCORE, "running", ns);
      await expect(KEY, o, "Progressing", /being deleted/);
      await op?.stop();
      op = undefined;
      await release(GITLABCORE, "running", ns);
      await applyGitLab(
        client,
        gitlabCore(ns, "failed", {
          version: { type: "Static", version: "1.0.0" },
          hostname: "gitlab2.example.com",
        }),
      );
      const stale = await client.get<GitLabCore>(GITLABCORE, "failed", ns);
      assert.ok((stale.status?.observedGeneration ?? 0) < (stale.metadata.generation ?? 0));
      await expect(KEY, stale, "Progressing", /status is for generation 1; .*generation 2/);
    });
  });

  describe("OpenBaoRestore (the restore controller)", () => {
    const KEY = "openbao.org_OpenBaoRestore";
    let ns: string;
    const clock = new Date("2026-12-01T10:00:00Z");
    const IMAGE = "localhost/platform-operator:dev";
    const rc = { log: silentLogger(), signal: new AbortController().signal };
    const get = (name: string) => client.get<OpenBaoRestore>(OPENBAORESTORE, name, ns);
    // One pass by a fresh reconciler, as the restore controller's own test drives it.
    const pass = async (name: string) => {
      const cur = await get(name);
      const r = new RestoreReconciler({
        client,
        events: new EventRecorder(client, "platform-operator/openbao", "test", silentLogger()),
        log: silentLogger(),
        restores: { get: () => cur, addHandler: () => {} } as unknown as Informer<OpenBaoRestore>,
        probe: async (_t, key): Promise<SnapshotHead> =>
          key.endsWith("good.snap") ? { exists: true, size: 4096 } : { exists: false },
        jobs: executorRestoreJobs(client, parseOpenBaoConfig({ executorImage: IMAGE }, "targets.openbao")),
        now: () => clock,
      });
      return r.reconcile(`${ns}/${name}`, rc);
    };
    const createRestore = (name: string, cluster: string, key = "snaps/good.snap") =>
      applyAny(
        client,
        {
          apiVersion: "openbao.org/v1alpha1",
          kind: OpenBaoRestoreKind,
          metadata: { name, namespace: ns },
          spec: {
            cluster,
            source: {
              key,
              target: {
                bucket: "snaps",
                endpoint: "http://s3.invalid:9000",
                credentialsSecretRef: { name: "s3" },
              },
            },
            tokenSecretRef: { name: "restore-token" },
          },
        },
        { fieldManager: "test-user", force: true },
      );

    before(async () => {
      await installOpenBaoClusterCrd(client);
      ns = await freshNamespace(client, "argo-restore");
      await client.apply(
        SERVICE_ACCOUNT,
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: ns } },
        { fieldManager: "test-setup", force: true },
      );
      await createOpenBaoCluster(client, ns, "bao", { replicas: 3 });
      await client.mergePatch(
        OPENBAOCLUSTER,
        "bao",
        ns,
        {
          status: {
            initialized: true,
            conditions: [
              {
                type: "Available",
                status: "True",
                reason: "AllReplicasReady",
                message: "3/3 voters ready",
                lastTransitionTime: "2026-12-01T09:00:00Z",
              },
            ],
          },
        },
        "status",
      );
    });
    after(async () => {
      // No controller runs here to drop the restore finalizer: the test does, so the namespace goes.
      for (const r of (await client.list<KubeObject>(OPENBAORESTORE, { namespace: ns })).items)
        await client
          .mergePatch(OPENBAORESTORE, r.metadata.name!, ns, { metadata: { finalizers: null } })
          .catch(() => {});
      await client.delete(NAMESPACE, ns).catch(() => {});
    });

    it("no status yet is Progressing (Pending)", async () => {
      await createRestore("r1", "bao");
      await expect(KEY, await get("r1"), "Progressing", /^Pending/);
    });

    it("Validating while a Secret it needs does not exist is Missing", async () => {
      await pass("r1");
      const r = await get("r1");
      assert.equal(r.status?.phase, "Validating");
      await expect(KEY, r, "Missing", /^Validating: token Secret restore-token .*does not exist/);
    });

    it("Running is Progressing, Completed is Healthy with the follow-up", async () => {
      for (const name of ["restore-token", "s3"])
        await client.create(SECRET, {
          apiVersion: "v1",
          kind: "Secret",
          // A static restore token carries upstream's labels for its cluster and purpose.
          metadata: {
            name,
            namespace: ns,
            ...(name === "restore-token"
              ? {
                  labels: {
                    "openbao.org/cluster": "bao",
                    "openbao.org/credential-purpose": "restore-token",
                  },
                }
              : {}),
          },
          stringData: { token: "not-a-real-token" },
        });
      await pass("r1");
      const running = await get("r1");
      assert.equal(running.status?.phase, "Running");
      await expect(KEY, running, "Progressing", /^Running: restore Job restore-r1 is running/);
      await finishExecutorJob(client, {
        namespace: ns,
        name: "restore-r1",
        result: { ok: true, operation: "restore", key: "snaps/good.snap", size: 4096, durationMs: 1500 },
        ok: true,
        at: clock,
        image: IMAGE,
      });
      await pass("r1");
      const done = await get("r1");
      assert.equal(done.status?.phase, "Completed");
      await expect(KEY, done, "Healthy", /^Completed: snapshot snaps\/good\.snap restored .*follow-up/);
    });

    it("Unknown (its committed Job vanished) is Degraded, saying it is not run again", async () => {
      await createRestore("r-gone", "bao");
      await pass("r-gone");
      assert.equal((await get("r-gone")).status?.phase, "Running");
      await client.delete(JOB, "restore-r-gone", ns, { propagationPolicy: "Background" });
      await eventually(
        async () => ((await client.getOrUndefined(JOB, "restore-r-gone", ns)) ? undefined : true),
        30_000,
        "the Job deleted",
      );
      await pass("r-gone");
      const r = await get("r-gone");
      assert.equal(r.status?.phase as string, "Unknown");
      await expect(
        KEY,
        r,
        "Degraded",
        /^Unknown: restore Job restore-r-gone was committed .*not created again/,
      );
    });

    it("Failed is Degraded, naming the field", async () => {
      await createRestore("r-nocluster", "nope");
      await pass("r-nocluster");
      const r = await get("r-nocluster");
      assert.equal(r.status?.phase, "Failed");
      await expect(KEY, r, "Degraded", /^Failed: spec\.cluster: OpenBaoCluster .*\/nope does not exist/);
    });
  });

  describe("OpenBaoCluster (status by the controller's own writers) and its backup-now action", () => {
    const KEY = "openbao.org_OpenBaoCluster";
    let ns: string;
    const now = () => new Date();
    const recorder = () => new EventRecorder(client, "platform-operator/openbao", "test", silentLogger());
    const get = (name: string) => client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns);
    const serving: PassResult = {
      initialized: true,
      desiredReplicas: 3,
      readyReplicas: 3,
      sealed: false,
      activeLeader: "c-0",
      currentVersion: "2.7.2",
      tls: { ready: true, reason: OpenBaoClusterReason.OperatorManagedTLS, message: "certificates issued" },
    };
    /** One workload pass's status write, as the reconciler's writeStatus does it. */
    const pass = async (name: string, r: PassResult, observeOnly = false) => {
      const cluster = await get(name);
      const next = nextStatus(cluster, r, now());
      if (observeOnly)
        next.conditions = driftedCondition(
          next.conditions ?? [],
          [{ action: "update", what: `StatefulSet/${name}` }],
          cluster.metadata.generation,
          now(),
        );
      await applyWorkloadStatus(client, cluster, next);
      return get(name);
    };

    before(async () => {
      await installOpenBaoClusterCrd(client);
      ns = await freshNamespace(client, "argo-bao");
    });
    after(async () => {
      for (const name of ["c", "held"]) await release(OPENBAOCLUSTER, name, ns);
    });

    it("initializing is Progressing", async () => {
      await createOpenBaoCluster(client, ns, "c", { replicas: 3 });
      const o = await pass("c", { initialized: false, desiredReplicas: 3, readyReplicas: 0 });
      assert.equal(o.status?.phase, "Initializing");
      await expect(KEY, o, "Progressing", /^phase Initializing: NoReplicasReady: 0\/3 voters ready/);
    });

    it("Available is Healthy", async () => {
      const o = await pass("c", serving);
      assert.equal(o.status?.phase, "Running");
      await expect(KEY, o, "Healthy", /^AllReplicasReady: 3\/3 voters ready/);
    });

    it("upgrading (Upgrading=True from the upgrade manager) is Progressing", async () => {
      const cluster = await get("c");
      await setUpgrading(
        client,
        recorder(),
        cluster,
        { status: "True", reason: OpenBaoClusterReason.UpgradeInProgress, message: "rolling c-2 to 2.7.3" },
        now(),
      );
      await expect(KEY, await get("c"), "Progressing", /^upgrading: InProgress: rolling c-2/);
      await setUpgrading(
        client,
        recorder(),
        await get("c"),
        {
          status: "False",
          reason: OpenBaoClusterReason.DowngradeBlocked,
          message: "2.7.2 -> 2.6.2 is a downgrade",
        },
        now(),
      );
      await expect(KEY, await get("c"), "Degraded", /^upgrade: DowngradeBlocked: /);
      await setUpgrading(
        client,
        recorder(),
        await get("c"),
        { status: "False", reason: OpenBaoClusterReason.UpgradeComplete, message: "running 2.7.2" },
        now(),
      );
      await expect(KEY, await get("c"), "Healthy", /^AllReplicasReady/);
    });

    it("Degraded is Degraded with the failed step", async () => {
      const o = await pass("c", {
        ...serving,
        blocked: {
          step: "storage",
          reason: OpenBaoClusterReason.StorageShrinkRefused,
          message: "spec.storage.size 1Gi is below 2Gi",
          failed: true,
        },
      });
      await expect(KEY, o, "Degraded", /^StorageShrinkRefused: storage: spec\.storage\.size 1Gi/);
    });

    it("an External TLS Secret that does not exist yet is Missing", async () => {
      const o = await pass("c", {
        ...serving,
        blocked: {
          step: "certificates",
          reason: OpenBaoClusterReason.TLSSecretMissing,
          message: "Secret c-tls not found",
          failed: false,
        },
      });
      await expect(KEY, o, "Missing", /^TLSSecretMissing: certificates: Secret c-tls not found/);
    });

    it("break glass is Degraded with what to do", async () => {
      await pass("c", serving);
      const glass: BreakGlassStatus = {
        active: true,
        reason: "RollbackConsensusRepairFailed",
        message: "no revision holds a quorum",
        nonce: "n-123",
        enteredAt: now().toISOString(),
      };
      await writeAdminOpsConcern(client, refOf(await get("c")), "breakGlass", () => glass);
      await expect(
        KEY,
        await get("c"),
        "Degraded",
        /^break glass: no revision holds a quorum; .*breakGlassAck/,
      );
      await writeAdminOpsConcern(client, refOf(await get("c")), "breakGlass", () => undefined);
      await expect(KEY, await get("c"), "Healthy", /^AllReplicasReady/);
    });

    it("observe-only with drift is Suspended; paused is Suspended", async () => {
      const drift = await pass("c", serving, true);
      await expect(KEY, drift, "Suspended", /^observe-only: a real run would: /);
      await pass("c", serving);
      await client.mergePatch(OPENBAOCLUSTER, "c", ns, { spec: { paused: true } });
      const paused = await pass("c", { ...serving, paused: true });
      await expect(KEY, paused, "Suspended", /^spec\.paused: only deletion is reconciled/);
      await client.mergePatch(OPENBAOCLUSTER, "c", ns, { spec: { paused: null } });
    });

    it("a status behind the generation is Progressing; being deleted is Progressing", async () => {
      await pass("c", serving);
      await client.mergePatch(OPENBAOCLUSTER, "c", ns, { spec: { replicas: 5 } });
      const stale = await get("c");
      assert.equal(stale.status?.conditions?.find((c) => c.type === "Available")?.status, "True");
      await expect(KEY, stale, "Progressing", /status is for generation \d+; waiting .*generation \d+/);
      await createOpenBaoCluster(client, ns, "held", { replicas: 1 });
      await pass("held", { ...serving, desiredReplicas: 1, readyReplicas: 1 });
      const o = await deleting<OpenBaoCluster>(OPENBAOCLUSTER, "held", ns);
      await expect(KEY, o, "Progressing", /being deleted/);
    });

    it("backup-now: offered only with spec.backup, and its annotation is a new manual trigger", async () => {
      const discovery = join(SCRIPTS, KEY, "actions", "discovery.lua");
      const action = join(SCRIPTS, KEY, "actions", "backup-now", "action.lua");
      const without = await lua.run("discovery", discovery, await get("c"));
      assert.equal((without["backup-now"] as { disabled: boolean }).disabled, true);
      await client.mergePatch(OPENBAOCLUSTER, "c", ns, {
        spec: { backup: { schedule: "0 3 * * *", target: { bucket: "b" }, tokenSecretRef: { name: "t" } } },
      });
      const withBackup = await get("c");
      assert.ok(withBackup.spec.backup, "the CRD kept spec.backup");
      const offered = await lua.run("discovery", discovery, withBackup);
      assert.equal((offered["backup-now"] as { disabled: boolean }).disabled, false);
      // Argo CD patches the live object with what the action returns; the controller reads the value.
      const changed = (await lua.run("action", action, withBackup)) as unknown as OpenBaoCluster;
      const trigger = changed.metadata.annotations?.["openbao.org/trigger-backup"];
      assert.match(trigger ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.deepEqual(changed.spec, withBackup.spec, "the action changes nothing but the annotation");
      await client.mergePatch(OPENBAOCLUSTER, "c", ns, {
        metadata: { annotations: { "openbao.org/trigger-backup": trigger } },
      });
      const live = await get("c");
      const d = decide({
        schedule: "0 3 * * *",
        now: new Date(),
        trigger: live.metadata.annotations?.["openbao.org/trigger-backup"],
        lastHandledTrigger: live.status?.backup?.lastHandledManualTrigger,
        createdAt: live.metadata.creationTimestamp,
      });
      assert.equal(d.due?.kind, "manual");
    });
  });
});
