import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { type RunningOperator, startOperator } from "../../src/cli/run.js";
import { LEASE } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { installGitLabCrds } from "../support/gitlab.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { installVaultSeedCrd } from "../support/vault.js";

// The operator with every target watching many namespaces, leader election on, on the real API
// server. With one HTTP/1.1 pool of 64 sockets, 9 namespaces were enough for the long-lived watches
// (one per kind per namespace) to take every socket: the Lease was never taken and nothing was
// reconciled, while the probes said ok. Each case here takes the Lease of every target and
// reconciles an object of each kind in the last namespace.

type Status = KubeObject & { status?: { conditions?: { type: string; observedGeneration?: number }[] } };

const TARGETS = ["openbao", "gitlab", "vault"] as const;

/** The project's own sample of a kind, moved into `ns`: a whole, valid object. */
function sample(file: string, ns: string): KubeObject {
  const path = fileURLToPath(new URL(`../../../deploy/samples/${file}`, import.meta.url));
  const obj = parse(readFileSync(path, "utf8")) as KubeObject;
  return { ...obj, metadata: { name: obj.metadata.name, namespace: ns } };
}

interface Scenario {
  op: RunningOperator;
  namespaces: string[];
  leaseNs: string;
  logs: string[];
}

async function startScenario(admin: KubeClient, count: number, client: string): Promise<Scenario> {
  const namespaces: string[] = [];
  for (let i = 0; i < count; i++) namespaces.push(await freshNamespace(admin, `many${count}-${i}`));
  const leaseNs = namespaces[0]!;
  const dir = makeTempDir("op-many");
  const config = join(dir, "operator.yaml");
  const list = `[${namespaces.join(", ")}]`;
  process.env["OP_MANY_BAO"] = sharedEnv().bao.addr;
  process.env["OP_MANY_TOKEN"] = sharedEnv().bao.rootToken;
  writeFileSync(
    config,
    `leaderElection: { enabled: true, namespace: ${leaseNs}, leaseName: many }
probes: { port: 0, host: 127.0.0.1 }
client: ${client}
targets:
  openbao:
    namespaces: ${list}
  gitlab:
    namespaces: ${list}
  vault:
    namespaces: ${list}
    backend:
      address: \${OP_MANY_BAO}
      allowHttp: true
      auth: { developmentToken: \${OP_MANY_TOKEN} }
`,
  );
  const logs: string[] = [];
  const op = await startOperator({
    configPath: config,
    kubeconfig: sharedEnv().kubeconfigPath,
    logStream: new Writable({
      write(c, _e, cb) {
        logs.push(String(c));
        cb();
      },
    }),
  });
  return { op, namespaces, leaseNs, logs };
}

/** Every target's Lease held by this operator, then an object of each kind in `ns` reconciled. */
async function assertServes(admin: KubeClient, s: Scenario, ns: string, label: string): Promise<number> {
  const started = performance.now();
  for (const t of TARGETS) {
    await eventually(
      async () => {
        const lease = await admin.get<KubeObject & { spec?: { holderIdentity?: string } }>(
          LEASE,
          `many-${t}`,
          s.leaseNs,
        );
        return lease.spec?.holderIdentity ? true : undefined;
      },
      60_000,
      `${label}: the ${t} target's Lease`,
    );
  }
  const objects: [typeof OPENBAOCLUSTER, KubeObject][] = [
    [OPENBAOCLUSTER, sample("openbaocluster.yaml", ns)],
    [GITLABCORE, sample("gitlabcore.yaml", ns)],
    [
      VAULTSEED,
      {
        apiVersion: "ohmlab.fr/v1alpha1",
        kind: "VaultSeed",
        metadata: { name: "seed", namespace: ns },
        spec: { path: `secret/${ns}/seed`, data: { a: "<random:8>" } },
      },
    ],
  ];
  for (const [type, obj] of objects) await admin.apply(type, obj, { fieldManager: "test", force: true });
  for (const [type, obj] of objects) {
    await eventually(
      async () => {
        const live = await admin.get<Status>(type, obj.metadata.name!, ns);
        const gen = live.metadata.generation;
        return live.status?.conditions?.some((c) => c.observedGeneration === gen) ? true : undefined;
      },
      60_000,
      `${label}: the ${obj.kind} in ${ns} to be reconciled`,
    );
  }
  return (performance.now() - started) / 1000;
}

describe("the operator watching many namespaces, leader election on", () => {
  let admin: KubeClient;

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(admin);
    await installGitLabCrds(admin);
    await installVaultSeedCrd(admin);
  });
  after(() => admin.close());

  for (const [name, client] of [
    ["HTTP/2", "{}"],
    ["HTTP/1.1", "{ http2: false }"],
  ] as const) {
    it(`9 namespaces over ${name}: takes its Leases and reconciles the last namespace`, async () => {
      const s = await startScenario(admin, 9, client);
      try {
        const seconds = await assertServes(admin, s, s.namespaces.at(-1)!, `9 namespaces, ${name}`);
        process.stdout.write(
          `# 9 namespaces over ${name}: Leases and 3 reconciles in ${seconds.toFixed(1)} s\n`,
        );
        const health = await fetch(`http://127.0.0.1:${s.op.probePort}/healthz`);
        assert.equal(health.status, 200, await health.text());
      } finally {
        await s.op.stop();
      }
    });
  }

  it("50 namespaces watched one by one: every kind of the three targets, thousands of streams", async () => {
    const s = await startScenario(admin, 50, "{ watchScope: namespaces }");
    try {
      const seconds = await assertServes(admin, s, s.namespaces.at(-1)!, "50 namespaces, one watch each");
      const scopes = s.op.managers.flatMap((m) => m.informerScopes());
      assert.ok(
        scopes.every((x) => x.scope === "namespaces" && x.watches >= 1),
        JSON.stringify(scopes),
      );
      const watches = scopes.reduce((n, x) => n + x.watches, 0);
      const connections = s.op.managers.map((m) => `${m.target} ${JSON.stringify(m.client.connections())}`);
      process.stdout.write(
        `# 50 namespaces, one watch per namespace: ${watches} watches; Leases and 3 reconciles in ${seconds.toFixed(1)} s; connections: ${connections.join(", ")}\n`,
      );
      const health = await fetch(`http://127.0.0.1:${s.op.probePort}/healthz`);
      assert.equal(health.status, 200, await health.text());
    } finally {
      await s.op.stop();
    }
  });

  it("50 namespaces, one cluster-wide watch per kind; a namespace added and one removed at run time", async () => {
    const s = await startScenario(admin, 50, "{}");
    try {
      const seconds = await assertServes(admin, s, s.namespaces.at(-1)!, "50 namespaces");
      // The test's identity may list and watch everywhere, and 50 namespaces pass "auto"'s threshold.
      const scopes = s.op.managers.flatMap((m) => m.informerScopes());
      assert.ok(
        scopes.every((x) => x.watches === 1),
        JSON.stringify(scopes),
      );
      const connections = s.op.managers.map((m) => `${m.target} ${JSON.stringify(m.client.connections())}`);
      process.stdout.write(
        `# 50 namespaces, cluster-wide watches: Leases and 3 reconciles in ${seconds.toFixed(1)} s; connections: ${connections.join(", ")}\n`,
      );
      assert.equal((await fetch(`http://127.0.0.1:${s.op.probePort}/readyz`)).status, 200);

      // A namespace added at run time: every target watches it, without a restart.
      const extra = await freshNamespace(admin, "many-added");
      for (const m of s.op.managers) m.setNamespaces([...(m.namespaces ?? []), extra]);
      await assertServes(admin, s, extra, "the added namespace");
      assert.ok(s.logs.join("").includes('"namespaces changed"'));

      // Removed: the target forgets it; a change there is no longer reconciled.
      const gone = s.namespaces[1]!;
      for (const m of s.op.managers) m.setNamespaces((m.namespaces ?? []).filter((n) => n !== gone));
      const vault = s.op.managers.find((m) => m.target === "vault")!;
      const seeds = vault.informer(VAULTSEED);
      await eventually(
        () => (seeds.list(gone).length === 0 ? true : undefined),
        10_000,
        "the removed namespace to leave the cache",
      );
      await admin.apply(
        VAULTSEED,
        {
          apiVersion: "ohmlab.fr/v1alpha1",
          kind: "VaultSeed",
          metadata: { name: "late", namespace: gone },
          spec: { path: `secret/${gone}/late`, data: { a: "<random:8>" } },
        },
        { fieldManager: "test" },
      );
      // The added namespace's seed is reconciled after the removal; the removed one's never is.
      await admin.apply(
        VAULTSEED,
        {
          apiVersion: "ohmlab.fr/v1alpha1",
          kind: "VaultSeed",
          metadata: { name: "after", namespace: extra },
          spec: { path: `secret/${extra}/after`, data: { a: "<random:8>" } },
        },
        { fieldManager: "test" },
      );
      await eventually(
        async () =>
          (await admin.get<Status>(VAULTSEED, "after", extra)).status?.conditions?.length ? true : undefined,
        30_000,
        "a seed in the added namespace",
      );
      const late = await admin.get<Status>(VAULTSEED, "late", gone);
      assert.equal(late.status, undefined, "nothing reconciles in a removed namespace");
    } finally {
      await s.op.stop();
    }
  });
});
