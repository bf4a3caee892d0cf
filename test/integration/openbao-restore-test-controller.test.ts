import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../src/apis/openbaorestore.js";
import { PERSISTENT_VOLUME_CLAIM, SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import type { BaoEndpoint, Health } from "../../src/targets/openbao/baoclient/client.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { ProbeClient } from "../../src/targets/openbao/drill/canary.js";
import { RestoreTestReconciler } from "../../src/targets/openbao/drill/reconciler.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { ensureNodeBinaries } from "../../src/testenv/node/binaries.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { removeTempDir } from "../../src/testenv/tempdirs.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { block, runShell, toolDir } from "../support/runbook.js";

// The restore-test controller's run against the real API server, each "operator restart" a new
// reconciler with no memory: one throwaway and one restore however often a pass is repeated, found
// again by name; the outcome recorded once; the throwaway, its restore, volume and Secrets deleted.
// No workload or restore controller runs here: the test moves the throwaway and its restore along
// by writing their status, and plays the restored pod with a probe double. A cluster of the
// throwaway's name that the controller did not make is left alone, volumes included. The real
// throwaway, restore and pod are in openbao-restore-test-node.test.ts.

const KEY = "e2e/ns/src/20261206T120000Z-aaaa.snap";

/** The restored pod as the test wants it: unsealed or not, the canary there or not. */
class FakePod extends ProbeClient {
  static sealed = false;
  static canary = 200;
  static reads: string[] = [];
  constructor() {
    super({ address: "https://pod.invalid:8200" } as BaoEndpoint);
  }
  override async health(): Promise<Health> {
    return { initialized: true, sealed: FakePod.sealed, standby: false };
  }
  override async read(path: string): Promise<{ status: number; hasData: boolean }> {
    FakePod.reads.push(path);
    return { status: FakePod.canary, hasData: FakePod.canary === 200 };
  }
}

describe("openbao restore-test controller on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  const rc = { log: silentLogger(), signal: new AbortController().signal };
  let clock = new Date();
  // The informers' caches, refreshed from the API server before each pass.
  const cache = new Map<string, OpenBaoCluster>();
  const restoreCache = new Map<string, OpenBaoRestore>();

  /** A fresh reconciler: what a restarted operator would run. */
  const reconciler = () =>
    new RestoreTestReconciler({
      client,
      events: new EventRecorder(client, "platform-operator/openbao", "test", silentLogger()),
      log: silentLogger(),
      clusters: { get: (k: string) => cache.get(k) } as never,
      restores: { get: (k: string) => restoreCache.get(k), addHandler: () => {} } as never,
      clusterDomain: "cluster.local",
      now: () => clock,
      probeClient: () => new FakePod(),
    });
  /** One pass on `name`, from the objects as the API server has them now (the informers' copies). */
  const pass = async (name: string, r = reconciler()) => {
    cache.clear();
    restoreCache.clear();
    for (const c of (await client.list<OpenBaoCluster>(OPENBAOCLUSTER, { namespace: ns })).items)
      cache.set(`${ns}/${c.metadata.name}`, c);
    for (const x of (await client.list<OpenBaoRestore>(OPENBAORESTORE, { namespace: ns })).items)
      restoreCache.set(`${ns}/${x.metadata.name}`, x);
    return r.reconcile(`${ns}/${name}`, rc);
  };
  const get = <T extends KubeObject>(type: typeof OPENBAOCLUSTER, name: string) =>
    client.getOrUndefined<T>(type, name, ns);
  const labelled = async (type: typeof OPENBAOCLUSTER, selector: string) =>
    (await client.list(type, { namespace: ns, labelSelector: selector })).items;
  const verified = async (name: string) =>
    (await client.get<OpenBaoCluster>(OPENBAOCLUSTER, name, ns)).status?.conditions?.find(
      (c) => c.type === "BackupVerified",
    );
  const secret = (name: string, data: Record<string, string>, labels: Record<string, string> = {}) =>
    client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: ns, labels },
      data,
    });
  const claim = (name: string, cluster: string) =>
    client.create(PERSISTENT_VOLUME_CLAIM, {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name, namespace: ns, labels: { "openbao.org/cluster": cluster } },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    });
  const source = async (name: string) => {
    await createOpenBaoCluster(client, ns, name, {
      replicas: 3,
      backup: {
        schedule: "0 3 * * *",
        tokenSecretRef: { name: "backup-token" },
        target: { bucket: "snaps", endpoint: "http://s3.invalid:9000", credentialsSecretRef: { name: "s3" } },
        restoreTest: { canary: { path: "kv/data/canary" } },
      },
    });
    await client.mergePatch(
      OPENBAOCLUSTER,
      name,
      ns,
      { status: { backup: { lastBackupKey: KEY } } },
      "status",
    );
    await secret(`${name}-unseal-key`, { key: Buffer.from([0, 255, 1, 254, 7]).toString("base64") });
  };
  /** Whether a PVC is gone or on its way (the pvc-protection finalizer needs a controller). */
  const claimGoing = async (name: string) => {
    const c = await client.getOrUndefined(PERSISTENT_VOLUME_CLAIM, name, ns);
    return !c || !!c.metadata.deletionTimestamp;
  };

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "obrt");
    await secret("backup-token", { token: Buffer.from("s.source").toString("base64") });
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("one throwaway with the source's seal key, found again after a restart, then one restore", async () => {
    await source("src");
    await pass("src");
    const t = await get<OpenBaoCluster>(OPENBAOCLUSTER, "src-restore-test");
    assert.ok(t, "the throwaway exists");
    assert.equal(t.spec.replicas, 1);
    assert.equal(t.metadata.annotations?.["openbao.org/restore-test-key"], KEY);
    const seal = await client.get<KubeObject & { data: Record<string, string> }>(
      SECRET,
      "src-restore-test-unseal-key",
      ns,
    );
    const own = await client.get<KubeObject & { data: Record<string, string> }>(SECRET, "src-unseal-key", ns);
    assert.equal(seal.data["key"], own.data["key"], "the key's bytes, unchanged");
    const first = await verified("src");
    assert.equal(first?.status, "Unknown");
    assert.equal(first?.reason, "RestoreTestRunning");

    // Restarts while it forms: the same throwaway, no second one, no restore before it is initialized.
    await pass("src");
    await pass("src");
    const again = await get<OpenBaoCluster>(OPENBAOCLUSTER, "src-restore-test");
    assert.equal(again?.metadata.uid, t.metadata.uid);
    assert.equal((await labelled(OPENBAOCLUSTER, "openbao.org/restore-test-of=src")).length, 1);
    assert.equal(await get(OPENBAORESTORE, "src-restore-test"), undefined);

    await client.mergePatch(
      OPENBAOCLUSTER,
      "src-restore-test",
      ns,
      { status: { initialized: true } },
      "status",
    );
    await pass("src");
    await pass("src");
    const r = await get<OpenBaoRestore>(OPENBAORESTORE, "src-restore-test");
    assert.ok(r, "the restore exists");
    assert.equal(r.spec.cluster, "src-restore-test");
    assert.equal(r.spec.source.key, KEY);
    assert.deepEqual(r.spec.tokenSecretRef, { name: "src-restore-test-root-token" });
    assert.equal((await labelled(OPENBAORESTORE, "openbao.org/restore-test-of=src")).length, 1);
  });

  it("a completed restore with the canary read back: BackupVerified=True, recorded once, nothing left", async () => {
    await claim("data-src-restore-test-0", "src-restore-test");
    // The CA the probe's endpoint is built with (the pod itself is the double).
    await secret("src-restore-test-tls-server", { "ca.crt": Buffer.from("ca").toString("base64") });
    FakePod.sealed = true;
    await client.mergePatch(
      OPENBAORESTORE,
      "src-restore-test",
      ns,
      { status: { phase: "Completed", completionTime: clock.toISOString().replace(/\.\d{3}Z$/, "Z") } },
      "status",
    );
    // Sealed right after the restore: waited for, not failed.
    await pass("src");
    assert.equal((await verified("src"))?.status, "Unknown");
    FakePod.sealed = false;
    await pass("src");
    const v = await verified("src");
    assert.equal(v?.status, "True", JSON.stringify(v));
    assert.equal(v?.reason, "BackupVerified");
    assert.deepEqual(FakePod.reads.slice(-1), ["kv/data/canary"]);
    const b = (await client.get<OpenBaoCluster>(OPENBAOCLUSTER, "src", ns)).status?.backup;
    assert.equal(b?.lastVerifiedBackupKey, KEY);
    assert.equal(b?.lastVerificationBackupKey, KEY);
    const when = b?.lastVerifiedTime;
    assert.ok(when);
    // Cleanup over a few passes (each a restart): restore, throwaway, volume and Secrets.
    for (let i = 0; i < 6; i++) {
      clock = new Date(clock.getTime() + 5000);
      await pass("src");
    }
    assert.equal(await get(OPENBAORESTORE, "src-restore-test"), undefined);
    assert.equal(await get(OPENBAOCLUSTER, "src-restore-test"), undefined);
    assert.equal(await client.getOrUndefined(SECRET, "src-restore-test-unseal-key", ns), undefined);
    assert.ok(await claimGoing("data-src-restore-test-0"), "the volume is deleted");
    // Play the PVC protection controller this control plane lacks: a volume still on its way out
    // holds the next run back (its claim name would be the same).
    const left = await client.getOrUndefined(PERSISTENT_VOLUME_CLAIM, "data-src-restore-test-0", ns);
    if (left)
      await client.mergePatch(PERSISTENT_VOLUME_CLAIM, "data-src-restore-test-0", ns, {
        metadata: { finalizers: null },
      });
    // The run was recorded once and is not run again for the same backup.
    const later = (await client.get<OpenBaoCluster>(OPENBAOCLUSTER, "src", ns)).status?.backup;
    assert.equal(later?.lastVerifiedTime, when);
    assert.equal((await labelled(OPENBAOCLUSTER, "openbao.org/restore-test-of=src")).length, 0);
  });

  it("a failed restore fails the run with the restore's reason; the last pass stands", async () => {
    const second = KEY.replace("aaaa", "bbbb");
    await client.mergePatch(
      OPENBAOCLUSTER,
      "src",
      ns,
      { status: { backup: { lastBackupKey: second } } },
      "status",
    );
    await pass("src");
    await client.mergePatch(
      OPENBAOCLUSTER,
      "src-restore-test",
      ns,
      { status: { initialized: true } },
      "status",
    );
    await pass("src");
    await client.mergePatch(
      OPENBAORESTORE,
      "src-restore-test",
      ns,
      {
        status: {
          phase: "Failed",
          conditions: [
            {
              type: "RestoreComplete",
              status: "False",
              reason: "RestoreFailed",
              message: "SnapshotFailed: hash check failed",
              lastTransitionTime: "2026-12-06T12:00:00Z",
            },
          ],
        },
      },
      "status",
    );
    await pass("src");
    const v = await verified("src");
    assert.equal(v?.status, "False");
    assert.equal(v?.reason, "RestoreTestRestoreFailed");
    assert.match(v?.message ?? "", /bbbb\.snap: SnapshotFailed: hash check failed/);
    const b = (await client.get<OpenBaoCluster>(OPENBAOCLUSTER, "src", ns)).status?.backup;
    assert.equal(b?.lastVerifiedBackupKey, KEY);
    assert.equal(b?.lastVerificationBackupKey, second);
    assert.equal(b?.lastVerificationFailureReason, "RestoreTestRestoreFailed");

    // docs/runbooks/openbao.md "Backup not verified": its check, pasted as a reader would, shows the
    // same reason, the restore's own words and the keys, in the shape the section says.
    const dir = await toolDir((await ensureNodeBinaries()).kubectl);
    try {
      const out = await runShell(
        block("openbao.md", "Backup not verified", "BackupVerified"),
        { NS: ns, NAME: "src", PATH: `${dir}:${process.env.PATH}`, KUBECONFIG: sharedEnv().kubeconfigPath },
        true,
      );
      assert.match(out, /^RestoreTestRestoreFailed: .*bbbb\.snap: SnapshotFailed: hash check failed$/m, out);
      const shown = /^\{\n[\s\S]*?\n\}$/m.exec(out);
      assert.ok(shown, `jq prints the backup status:\n${out}`);
      const fields = JSON.parse(shown[0]) as Record<string, string | null>;
      assert.equal(fields["lastVerifiedBackupKey"], KEY, "the last key that passed");
      assert.equal(fields["lastVerificationBackupKey"], second, "the key that failed");
      assert.equal(fields["lastVerificationFailureReason"], "RestoreTestRestoreFailed");
      assert.match(fields["lastVerificationFailureMessage"] ?? "", /SnapshotFailed: hash check failed/);
      assert.ok(fields["lastVerifiedTime"], "and when it last passed");
      // The run's throwaway, while the passes clean it up, is what the section's listing names.
      assert.match(out, /^openbaocluster\.openbao\.org\/src-restore-test\s/m, out);
      assert.doesNotMatch(out, /^error:/m, `every command of the check runs:\n${out}`);
    } finally {
      removeTempDir(dir);
    }
  });

  it("a cluster of the throwaway's name it did not make: untouched, volume included, and said", async () => {
    await source("other");
    await createOpenBaoCluster(client, ns, "other-restore-test", { replicas: 1 });
    await claim("data-other-restore-test-0", "other-restore-test");
    const before = await get<OpenBaoCluster>(OPENBAOCLUSTER, "other-restore-test");
    for (let i = 0; i < 3; i++) await pass("other");
    const v = await verified("other");
    assert.equal(v?.status, "False");
    assert.equal(v?.reason, "RestoreTestInvalid");
    assert.match(v?.message ?? "", /other-restore-test exists and is not this cluster's restore test/);
    const after = await get<OpenBaoCluster>(OPENBAOCLUSTER, "other-restore-test");
    assert.equal(after?.metadata.uid, before?.metadata.uid);
    assert.equal(after?.metadata.deletionTimestamp, undefined);
    assert.equal(after?.metadata.annotations?.["openbao.org/restore-test-key"], undefined);
    const c = await client.getOrUndefined(PERSISTENT_VOLUME_CLAIM, "data-other-restore-test-0", ns);
    assert.ok(c && !c.metadata.deletionTimestamp, "its volume is left alone");
    assert.equal(await get(OPENBAORESTORE, "other-restore-test"), undefined);
  });
});
