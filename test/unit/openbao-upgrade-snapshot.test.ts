import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import {
  planSnapshot,
  snapshotJobIdentity,
  snapshotRequested,
} from "../../src/targets/openbao/adminops/upgrade/snapshot/index.js";

// The pure rules of the pre-upgrade snapshot: when one is taken, the Job's name, and what must hold
// before its Job is created. The Job itself is created and read back in
// test/integration/openbao-upgrade-snapshot.test.ts.

const cluster = (spec: Record<string, unknown>): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "bao", namespace: "ns", uid: "u" },
    spec: { version: "2.7.2", replicas: 3, storage: { size: "1Gi" }, ...spec },
  }) as unknown as OpenBaoCluster;

const target = { bucket: "snaps", endpoint: "http://s3:9000", credentialsSecretRef: { name: "s3-creds" } };
const all = new Set(["s3-creds", "upgrade-token", "backup-token", "bao-tls-server"]);

describe("pre-upgrade snapshot rules", () => {
  it("is requested by spec.upgrade.preUpgradeSnapshot, or for blue-green by its own flag", () => {
    assert.equal(snapshotRequested(cluster({})), false);
    assert.equal(snapshotRequested(cluster({ upgrade: { preUpgradeSnapshot: true } })), true);
    const bg = cluster({ upgrade: { strategy: "BlueGreen", blueGreen: { preUpgradeSnapshot: true } } });
    assert.equal(snapshotRequested(bg), true);
    // The blue-green flag does not ask a rolling upgrade for one.
    assert.equal(snapshotRequested(bg, "RollingUpdate"), false);
    assert.equal(snapshotRequested(cluster({ upgrade: { blueGreen: { preUpgradeSnapshot: true } } })), false);
  });

  it("rolling: upstream's pre-upgrade backup Job (pre-upgrade-backup-<name>-gen<generation>, component backup)", () => {
    const c = cluster({ upgrade: { preUpgradeSnapshot: true } });
    c.metadata.generation = 4;
    const id = snapshotJobIdentity(c, "RollingUpdate");
    assert.deepEqual(id, {
      name: "pre-upgrade-backup-bao-gen4",
      component: "backup",
      labels: { "openbao.org/backup-type": "pre-upgrade" },
      annotations: {},
    });
  });

  it("blue-green: upstream's upgrade-snapshot Job, named from the versions, image, replicas and blue revision", () => {
    const c = cluster({ upgrade: { strategy: "BlueGreen", blueGreen: { preUpgradeSnapshot: true } } });
    c.status = { currentVersion: "2.6.2" } as OpenBaoCluster["status"];
    const id = snapshotJobIdentity(c, "BlueGreen");
    assert.match(id.name, /^upgrade-bao-preupgrade-snapshot-[0-9a-f]{10}$/);
    assert.equal(id.component, "upgrade-snapshot");
    assert.deepEqual(id.labels, {}, "upstream's blue-green snapshot carries no backup-type label");
    assert.deepEqual(id.annotations, { "openbao.org/snapshot-phase": "pre-upgrade" });
    const later = { ...c, status: { currentVersion: "2.6.2", blueGreen: { blueRevision: "2-6-2-ab12c" } } };
    assert.notEqual(snapshotJobIdentity(later as OpenBaoCluster, "BlueGreen").name, id.name);
  });

  it("needs spec.backup's target, naming the field", () => {
    const p = planSnapshot({
      cluster: cluster({ upgrade: { preUpgradeSnapshot: true } }),
      secretsPresent: all,
    });
    assert.deepEqual(p.ok, false);
    assert.equal((p as { reason: string }).reason, "PrerequisitesMissing");
    assert.match((p as { message: string }).message, /spec\.backup\.target/);
  });

  it("the Hardened profile refuses a snapshot whose Job has no egress rule to the object store", () => {
    const spec = {
      profile: "Hardened",
      upgrade: { preUpgradeSnapshot: true, jwtAuthRole: "upgrader" },
      backup: { schedule: "@daily", target },
    };
    const p = planSnapshot({ cluster: cluster(spec as never), secretsPresent: all, defaultImage: "op:dev" });
    assert.equal((p as { reason: string }).reason, "NetworkEgressRulesRequired");
    const rule = { to: [{ ipBlock: { cidr: "192.0.2.0/24" } }] };
    const ok = planSnapshot({
      cluster: cluster({ ...spec, network: { egressRules: [rule] } } as never),
      secretsPresent: all,
      defaultImage: "op:dev",
    });
    assert.ok(ok.ok);
  });

  it("logs in with spec.upgrade's role or token first, spec.backup's otherwise", () => {
    const own = planSnapshot({
      cluster: cluster({
        upgrade: { preUpgradeSnapshot: true, jwtAuthRole: "upgrader" },
        backup: { schedule: "@daily", tokenSecretRef: { name: "backup-token" }, target },
      }),
      secretsPresent: all,
      defaultImage: "op:dev",
    });
    assert.ok(own.ok);
    assert.deepEqual(own.auth, { method: "jwt", role: "upgrader", audience: "openbao-internal" });
    // The target's openBaoAudience reaches the Job's token.
    const corp = planSnapshot({
      cluster: cluster({
        upgrade: { preUpgradeSnapshot: true, jwtAuthRole: "upgrader" },
        backup: { target },
      }),
      secretsPresent: all,
      defaultImage: "op:dev",
      audience: "corp-bao",
    });
    assert.ok(corp.ok);
    assert.deepEqual(corp.auth, { method: "jwt", role: "upgrader", audience: "corp-bao" });
    assert.equal(own.authFrom, "upgrade");
    const fallback = planSnapshot({
      cluster: cluster({
        upgrade: { preUpgradeSnapshot: true },
        backup: { schedule: "@daily", tokenSecretRef: { name: "backup-token" }, target },
      }),
      secretsPresent: all,
      defaultImage: "op:dev",
    });
    assert.ok(fallback.ok);
    assert.deepEqual(fallback.auth, { method: "token", secretName: "backup-token" });
    assert.equal(fallback.authFrom, "backup");
  });

  it("names the missing login, token Secret, credentials Secret, CA and image, each on its own", () => {
    const base = { schedule: "@daily", target };
    const noAuth = planSnapshot({
      cluster: cluster({ upgrade: { preUpgradeSnapshot: true }, backup: base }),
      secretsPresent: all,
      defaultImage: "op:dev",
    });
    assert.equal((noAuth as { reason: string }).reason, "AuthenticationRequired");
    assert.match((noAuth as { message: string }).message, /spec\.upgrade\.jwtAuthRole/);

    const withToken = cluster({
      upgrade: { preUpgradeSnapshot: true, tokenSecretRef: { name: "upgrade-token" } },
      backup: base,
    });
    const noToken = planSnapshot({
      cluster: withToken,
      secretsPresent: new Set(["s3-creds"]),
      defaultImage: "i",
    });
    assert.equal((noToken as { reason: string }).reason, "NoBackupToken");
    assert.match((noToken as { message: string }).message, /upgrade-token \(spec\.upgrade\.tokenSecretRef\)/);

    const noCreds = planSnapshot({
      cluster: withToken,
      secretsPresent: new Set(["upgrade-token"]),
      defaultImage: "i",
    });
    assert.match(
      (noCreds as { message: string }).message,
      /s3-creds \(spec\.backup\.target\.credentialsSecretRef\)/,
    );

    const noCa = planSnapshot({
      cluster: withToken,
      secretsPresent: new Set(["upgrade-token", "s3-creds"]),
      caSecret: "bao-tls-server",
      defaultImage: "i",
    });
    assert.match((noCa as { message: string }).message, /bao-tls-server/);

    const noImage = planSnapshot({ cluster: withToken, secretsPresent: all });
    assert.match((noImage as { message: string }).message, /spec\.upgrade\.image/);
    const image = planSnapshot({
      cluster: cluster({
        upgrade: { preUpgradeSnapshot: true, tokenSecretRef: { name: "upgrade-token" }, image: "up:1" },
        backup: { ...base, image: "bk:1" },
      }),
      secretsPresent: all,
      defaultImage: "op:dev",
    });
    assert.equal(image.ok && image.image, "up:1");
  });
});
