import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../src/apis/openbaorestore.js";
import { OpenBaoRestoreReason } from "../../src/apis/openbaorestore-names.js";
import { restoreJobName, restoreLockIdentity } from "../../src/targets/openbao/restore/names.js";
import { completed, failed, running } from "../../src/targets/openbao/restore/status.js";
import { type RestoreObservation, validateRestore } from "../../src/targets/openbao/restore/validate.js";

const restore = (spec: Partial<OpenBaoRestore["spec"]> = {}, name = "r1"): OpenBaoRestore => ({
  apiVersion: "openbao.org/v1alpha1",
  kind: "OpenBaoRestore",
  metadata: { name, namespace: "ns", uid: "u1", generation: 1 },
  spec: {
    cluster: "bao",
    source: { key: "p/ns/bao/x.snap", target: { bucket: "b", credentialsSecretRef: { name: "creds" } } },
    tokenSecretRef: { name: "tok" },
    ...spec,
  },
});
const cluster = (available = true, initialized = true): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "bao", namespace: "ns" },
    spec: { version: "2.7.2", storage: { size: "1Gi" } },
    status: {
      initialized,
      conditions: [
        {
          type: "Available",
          status: available ? "True" : "False",
          reason: available ? "AllReplicasReady" : "NoReplicasReady",
          message: "",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    },
  }) as OpenBaoCluster;
const obs = (o: Partial<RestoreObservation> = {}): RestoreObservation => ({
  restore: restore(),
  cluster: cluster(),
  secretsFound: new Set(["tok", "creds"]),
  snapshot: { exists: true, size: 10 },
  ...o,
});

describe("restore validation", () => {
  it("passes with everything in place and carries the snapshot size", () => {
    assert.deepEqual(validateRestore(obs()), {
      kind: "ok",
      auth: { method: "token", secretName: "tok" },
      size: 10,
      forced: [],
    });
  });

  it("uses a static restore token only from a Secret with upstream's labels for this cluster", () => {
    const labelled = { "openbao.org/cluster": "bao", "openbao.org/credential-purpose": "restore-token" };
    const withLabels = (labels: Record<string, string> | undefined) =>
      validateRestore(obs({ secretLabels: new Map([["tok", labels]]) }));
    assert.equal(withLabels(labelled).kind, "ok");
    const none = withLabels(undefined);
    assert.equal(none.kind, "wait");
    assert.equal((none as { reason: string }).reason, "CredentialsMissing");
    assert.match(
      (none as { message: string }).message,
      /^token Secret tok \(tokenSecretRef\) lacks the labels a restore token carries: openbao\.org\/cluster=bao, openbao\.org\/credential-purpose=restore-token;/,
    );
    // Labelled for another cluster, or for another purpose: not this restore's token.
    assert.match(
      (withLabels({ ...labelled, "openbao.org/cluster": "other" }) as { message: string }).message,
      /carries: openbao\.org\/cluster=bao;/,
    );
    assert.match(
      (withLabels({ ...labelled, "openbao.org/credential-purpose": "backup-token" }) as { message: string })
        .message,
      /carries: openbao\.org\/credential-purpose=restore-token;/,
    );
    // The target's own root-token Secret is the operator's, written for this cluster: no labels asked
    // (the restore tests log in with it).
    assert.equal(
      validateRestore(
        obs({
          restore: restore({ tokenSecretRef: { name: "bao-root-token" } }),
          secretsFound: new Set(["bao-root-token", "creds"]),
          secretLabels: new Map([["bao-root-token", { "openbao.org/cluster": "bao" }]]),
        }),
      ).kind,
      "ok",
    );
    // A JWT role wins over the token, so the Secret is not read for it: no labels asked.
    assert.equal(
      validateRestore(
        obs({ restore: restore({ jwtAuthRole: "restore" }), secretLabels: new Map([["tok", {}]]) }),
      ).kind,
      "ok",
    );
  });

  it("fails what an immutable request can never get past, naming the field", () => {
    const none = validateRestore(obs({ cluster: undefined }));
    assert.equal(none.kind, "fail");
    assert.match(
      (none as { message: string }).message,
      /^spec\.cluster: OpenBaoCluster ns\/bao does not exist/,
    );
    const noAuth = validateRestore(obs({ restore: restore({ tokenSecretRef: undefined }) }));
    assert.deepEqual([noAuth.kind, (noAuth as { reason: string }).reason], ["fail", "CredentialsMissing"]);
    const gone = validateRestore(obs({ snapshot: { exists: false } }));
    assert.deepEqual([gone.kind, (gone as { reason: string }).reason], ["fail", "SnapshotNotFound"]);
  });

  it("waits for what can still come: initialization, health, Secrets, a reachable store", () => {
    const reason = (o: RestoreObservation) => {
      const v = validateRestore(o);
      return `${v.kind}:${(v as { reason?: string }).reason}`;
    };
    assert.equal(reason(obs({ cluster: cluster(true, false) })), "wait:ClusterNotInitialized");
    assert.equal(reason(obs({ cluster: cluster(false) })), "wait:ClusterUnhealthy");
    assert.equal(reason(obs({ secretsFound: new Set(["creds"]) })), "wait:CredentialsMissing");
    assert.equal(reason(obs({ secretsFound: new Set(["tok"]) })), "wait:CredentialsMissing");
    assert.equal(
      reason(obs({ snapshot: new Error("head p/ns/bao/x.snap: connect ECONNREFUSED") })),
      "wait:SnapshotNotFound",
    );
  });

  it("force overrides the health check only, and says so", () => {
    const v = validateRestore(obs({ restore: restore({ force: true }), cluster: cluster(false) }));
    assert.equal(v.kind, "ok");
    assert.deepEqual((v as { forced: string[] }).forced, ["ClusterUnhealthy"]);
    const uninit = validateRestore(
      obs({ restore: restore({ force: true }), cluster: cluster(false, false) }),
    );
    assert.equal(uninit.kind, "wait");
  });

  it("falls back to the cluster's backup auth when the request names none", () => {
    const c = cluster();
    c.spec.backup = {
      schedule: "@daily",
      jwtAuthRole: "backup",
      target: { bucket: "b" },
    } as OpenBaoCluster["spec"]["backup"];
    const v = validateRestore(obs({ restore: restore({ tokenSecretRef: undefined }), cluster: c }));
    assert.deepEqual((v as { auth: unknown }).auth, { method: "jwt", role: "backup" });
  });

  it("prefers the cluster's spec.restore.jwtAuthRole to its backup auth", () => {
    const c = cluster();
    c.spec.backup = {
      schedule: "@daily",
      jwtAuthRole: "backup",
      target: { bucket: "b" },
    } as OpenBaoCluster["spec"]["backup"];
    c.spec.restore = { jwtAuthRole: "restorer" };
    const v = validateRestore(obs({ restore: restore({ tokenSecretRef: undefined }), cluster: c }));
    assert.deepEqual((v as { auth: unknown }).auth, { method: "jwt", role: "restorer" });
    const own = validateRestore(obs({ cluster: c }));
    assert.deepEqual(
      (own as { auth: unknown }).auth,
      { method: "token", secretName: "tok" },
      "the request's own auth wins",
    );
  });
});

describe("restore names and status", () => {
  it("derives the Job name and lock holder from the request alone, within 63 characters", () => {
    assert.equal(restoreJobName(restore()), "restore-r1");
    const long = restore({}, "x".repeat(60));
    const name = restoreJobName(long);
    assert.ok(name.length <= 63);
    assert.equal(name, restoreJobName(long));
    assert.match(name, /^restore-x+-[0-9a-f]{8}$/);
    assert.notEqual(name, restoreJobName(restore({}, `${"x".repeat(59)}y`)));
    assert.deepEqual(restoreLockIdentity(restore()), { operation: "Restore", holder: "restore/ns/r1" });
  });

  it("terminal statuses say what follow-up remains; a failure before the Job says nothing changed", () => {
    const t = new Date("2026-12-01T10:00:00Z");
    const r = restore();
    const run = running(r, t, { jobName: "restore-r1", size: 10, forced: [] });
    assert.equal(run.phase, "Running");
    assert.equal(run.startTime, "2026-12-01T10:00:00Z");
    const done = completed({ ...r, status: run }, t, 10);
    assert.equal(done.phase, "Completed");
    assert.match(done.message ?? "", /follow-up: .*OpenBaoSealed/);
    assert.equal(done.conditions?.find((c) => c.type === "RestoreComplete")?.reason, "RestoreSucceeded");
    const early = failed(r, t, OpenBaoRestoreReason.SnapshotNotFound, "spec.source: no snapshot");
    assert.match(early.message ?? "", /the cluster was not changed/);
    const late = failed(
      { ...r, status: run },
      t,
      OpenBaoRestoreReason.RestoreFailed,
      "OpenBao refused the snapshot",
    );
    assert.match(late.message ?? "", /follow-up/);
  });
});

describe("restore validation: the Hardened profile", () => {
  it("fails a restore into a Hardened cluster without egress rules, and passes one with them", () => {
    const hardened = (egressRules?: unknown[]) => {
      const c = cluster();
      return {
        ...c,
        spec: { ...c.spec, profile: "Hardened", network: egressRules ? { egressRules } : {} },
      } as OpenBaoCluster;
    };
    const v = validateRestore(obs({ cluster: hardened() }));
    assert.equal(v.kind, "fail");
    assert.equal((v as { reason: string }).reason, "NetworkEgressRulesRequired");
    assert.match((v as { message: string }).message, /^OpenBaoCluster ns\/bao: .*spec\.network\.egressRules/);
    const rule = { to: [{ ipBlock: { cidr: "192.0.2.0/24" } }] };
    assert.equal(validateRestore(obs({ cluster: hardened([rule]) })).kind, "ok");
  });
});
