import assert from "node:assert/strict";
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { ensureBinaries } from "../../src/testenv/binaries.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { runCommand } from "../../src/testenv/exec.js";
import { sharedNode } from "../../src/testenv/node/shared.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";
import { applySeed, seed, startVaultTarget, vaultSuite, waitForReason } from "../support/vault.js";

// The OpenBaoCluster runbook tried on the local node: the shell blocks of a section are read from
// docs/runbooks/openbao.md itself (what a user pastes is what runs), with the variables the section
// names set, against a real 3-voter cluster broken the way the section describes. One cluster is
// reused: a majority sealed by a replaced static key (No leader, then Sealed cluster), then two
// voters whose volumes are gone (Lost quorum, peers.json on the survivor).

const RUNBOOKS = fileURLToPath(new URL("../../../docs/runbooks/", import.meta.url));
const NAME = "rb";
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

/** The `sh` blocks under a `## ` heading of a runbook (list-indented ones too), or its intro with "". */
function shellBlocks(file: string, heading: string): string[] {
  const md = readFileSync(join(RUNBOOKS, file), "utf8");
  const start = heading ? md.indexOf(`\n## ${heading}\n`) : 0;
  assert.ok(start >= 0, `${file} has a section ${heading}`);
  const end = md.indexOf("\n## ", start + 1);
  const body = md.slice(start, end < 0 ? undefined : end);
  const blocks: string[] = [];
  for (const m of body.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm))
    blocks.push(
      m[2]!
        .split("\n")
        .map((l) => l.slice(m[1]!.length))
        .join("\n"),
    );
  return blocks;
}

/** The one block of a section that contains `marker`. */
function block(file: string, heading: string, marker: string): string {
  const found = shellBlocks(file, heading).filter((b) => b.includes(marker));
  assert.equal(found.length, 1, `one block of ${file} "${heading}" holds ${marker}`);
  return found[0]!;
}

/**
 * Runs a block with bash as a user's shell would, with `env` (the section's variables, PATH with
 * kubectl and bao). `check` blocks may end non-zero (`bao status` exits 2 while sealed); the others
 * stop at their first failure. Bounded, so a documented wait that never ends fails the test.
 */
async function runShell(script: string, env: Record<string, string>, check = false): Promise<string> {
  const r = await runCommand(
    "timeout",
    ["300", "bash", "-c", `${check ? "" : "set -eo pipefail\n"}${script}\n${check ? "true" : ""}`],
    { env: { ...process.env, ...env } },
  );
  return r.stdout + r.stderr;
}

/** A folder for PATH with the tools a user runs the runbooks with: the node's kubectl, the pinned bao. */
async function toolDir(kubectl: string): Promise<string> {
  const dir = makeTempDir("runbook");
  symlinkSync(kubectl, join(dir, "kubectl"));
  symlinkSync((await ensureBinaries()).baoDefault, join(dir, "bao"));
  return dir;
}

describe("openbao runbook: the documented commands recover a broken cluster", {
  timeout: 20 * 60_000,
}, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let dir = "";
  let vars: Record<string, string> = {};

  /** An openbao.md block with the intro's helpers (token, bao_in) defined first. */
  const run = (script: string, extra: Record<string, string> = {}, check = false) =>
    runShell(`${shellBlocks("openbao.md", "")[0]}\n${script}`, { ...vars, ...extra }, check);
  const cluster = (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  const condition = async (type: string) =>
    ((await cluster()).status?.conditions ?? []).find((c: Json) => c.type === type) as Json | undefined;
  const labelled = async (selector: string): Promise<string[]> =>
    JSON.parse(
      await ctx.kubectl(["get", "pods", "-l", `openbao.org/cluster=${NAME},${selector}`, "-o", "json"]),
    ).items.map((p: Json) => p.metadata.name as string);
  /** Every voter Ready and unsealed, one leader, and the status saying so. */
  const recovered = (what: string) =>
    poll(
      async () => {
        const c = await cluster();
        const leader = c.status?.conditions?.find((x: Json) => x.type === "OpenBaoLeader");
        const sealed = c.status?.conditions?.find((x: Json) => x.type === "OpenBaoSealed");
        if (c.status?.readyReplicas !== 3 || leader?.status !== "True" || sealed?.status !== "False")
          return undefined;
        const unsealed = await labelled("openbao-sealed=false");
        return unsealed.length === 3 && (await labelled("openbao-active=true")).length === 1 ? c : undefined;
      },
      300_000,
      what,
    );

  before(async () => {
    ctx = await nodeNamespace("obrun");
    await installOpenBaoCrd(ctx);
    dir = await toolDir(ctx.node.kubectl);
    vars = {
      NS: ctx.namespace,
      NAME,
      PATH: `${dir}:${process.env.PATH}`,
      KUBECONFIG: ctx.node.kubeconfigPath,
    };
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "3s" });
    await ctx.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME },
      spec: { version: BAO_DEFAULT_VERSION, replicas: 3, storage: { size: "128Mi" } },
    });
    const t = performance.now();
    await recovered("the cluster to form 3 voters with a leader");
    process.stdout.write(`# formed in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  });
  after(async () => {
    await op?.stop();
    await deleteNamespace(ctx);
    if (dir) removeTempDir(dir);
  });

  it("a replaced static key seals a majority: No leader sends to Sealed cluster, whose commands unseal it", async () => {
    const KEYFILE = join(dir, "unseal-key.b64");
    await run(block("openbao.md", "Sealed cluster", '> "$KEYFILE"'), { KEYFILE });
    const original = readFileSync(KEYFILE, "utf8");
    assert.ok(original.length > 0, "the documented copy of the key holds it");

    // Broken: the Secret deleted (the operator makes a new key), then two voters restart on it.
    const t = performance.now();
    await ctx.kubectl(["delete", "secret", `${NAME}-unseal-key`]);
    await poll(
      async () => {
        const s = await ctx.getJson(`secret/${NAME}-unseal-key`).catch(() => undefined);
        return s?.data?.key && s.data.key !== original ? true : undefined;
      },
      60_000,
      "the operator to make a new unseal key",
    );
    await ctx.kubectl(["delete", "pod", `${NAME}-1`, `${NAME}-2`]);
    await poll(
      async () => ((await labelled("openbao-sealed=true")).length === 2 ? true : undefined),
      180_000,
      "pods 1 and 2 to start sealed",
    );
    await poll(
      async () => ((await condition("OpenBaoLeader"))?.status === "False" ? true : undefined),
      120_000,
      "OpenBaoLeader=False with a majority sealed",
    );
    const broken = performance.now();

    // No leader's check names the sealed pods; Sealed cluster's check says why.
    const pods = await run(block("openbao.md", "No leader", "-L openbao-active,openbao-sealed"), {}, true);
    for (const i of [1, 2])
      assert.match(
        pods,
        new RegExp(`^${NAME}-${i}\\s.*\\strue\\s+(true|false)\\s*$`, "m"),
        `${NAME}-${i} sealed`,
      );
    const why = await run(block("openbao.md", "Sealed cluster", "bao status"), { POD: `${NAME}-1` }, true);
    assert.match(why, /Seal Type\s+static/);
    assert.match(why, /Sealed\s+true/);

    // Act: the key back from the copy, the sealed pods restarted one at a time.
    await run(block("openbao.md", "Sealed cluster", "kubectl patch secret"), { KEYFILE });
    const acted = performance.now();
    await recovered("every voter unsealed with a leader after the runbook's commands");
    assert.equal((await ctx.getJson(`secret/${NAME}-unseal-key`)).data.key, original);
    process.stdout.write(
      `# sealed majority: broken in ${((broken - t) / 1000).toFixed(1)} s, runbook commands ${((acted - broken) / 1000).toFixed(1)} s, recovered ${((performance.now() - acted) / 1000).toFixed(1)} s later\n`,
    );
  });

  it("two voters whose volumes are gone: Lost quorum's peers.json brings the survivor back, the others rejoin", async () => {
    const t = performance.now();
    const claims = [1, 2].map((i) => `data-${NAME}-${i}`);
    await ctx.kubectl(["delete", "pvc", ...claims, "--wait=false"]);
    await ctx.kubectl(["delete", "pod", `${NAME}-1`, `${NAME}-2`]);
    await poll(
      async () => ((await condition("OpenBaoLeader"))?.status === "False" ? true : undefined),
      120_000,
      "OpenBaoLeader=False with two voters' data gone",
    );
    // The survivor cannot answer for Raft: no leader among the voters it knows.
    const peersBefore = await run(block("openbao.md", "No leader", "list-peers"), {}, true);
    assert.doesNotMatch(peersBefore, /leader\s+true/);
    const broken = performance.now();

    const act = shellBlocks("openbao.md", "Lost quorum");
    assert.equal(act.length, 2, "Lost quorum has its recovery and its unpause blocks");
    await run(act[0]!, { SURVIVORS: `${NAME}-0` });
    assert.equal((await cluster()).spec.paused, true, "the runbook paused the operator first");
    await run(act[1]!);
    assert.notEqual((await cluster()).spec.paused, true, "and unpaused it at the end");
    const acted = performance.now();
    await recovered("three voters with a leader after peers.json");
    // The survivor's data is the cluster's: the root token still works, and Raft lists all three.
    const peers = await poll(
      async () => {
        const out = await run('bao_in "$NAME-0" operator raft list-peers', {}, true);
        return [0, 1, 2].every((i) =>
          new RegExp(`^${NAME}-${i}\\s+\\S+\\s+(leader|follower)\\s+true\\s*$`, "m").test(out),
        )
          ? out
          : undefined;
      },
      120_000,
      "Raft to list the three pods as voters",
      2000,
    );
    assert.equal(peers.match(/\sleader\s+true/g)?.length ?? 0, 1, peers);
    process.stdout.write(
      `# lost quorum: broken in ${((broken - t) / 1000).toFixed(1)} s, runbook commands ${((acted - broken) / 1000).toFixed(1)} s, recovered ${((performance.now() - acted) / 1000).toFixed(1)} s later\n`,
    );
  });
});

describe("vaultseed runbook: Forbidden, on the API server and a dev OpenBao", () => {
  it("a path the role's policies do not cover: the check shows them, the documented policy write makes it Ready", async () => {
    const { client, ns } = await vaultSuite("vsrb");
    const dir = await toolDir((await sharedNode()).kubectl);
    const target = await startVaultTarget(client, ns);
    try {
      // Broken: the role's policy covers secret/<ns>/ only; the object seeds elsewhere.
      const prefix = `rb-${ns}`;
      await applySeed(client, seed(ns, "billing", { path: `secret/${prefix}/billing`, data: { a: "1" } }));
      await waitForReason(client, ns, "billing", "Forbidden", 60_000);
      const env = {
        NS: ns,
        NAME: "billing",
        BAO_ADDR: sharedEnv().bao.addr,
        BAO_TOKEN: sharedEnv().bao.rootToken,
        MOUNT: `k8s-${ns}`,
        ROLE: "ohmlab-controller",
        PATH: `${dir}:${process.env.PATH}`,
        KUBECONFIG: sharedEnv().kubeconfigPath,
      };
      const seen = await runShell(block("vaultseed.md", "Forbidden", "bao policy read"), env, true);
      assert.match(seen, new RegExp(`^secret/${prefix}/billing: .*permission denied`, "m"));
      assert.match(seen, new RegExp(`^# seed-${ns}$`, "m"), "the role's policy is named");
      assert.ok(seen.includes(`secret/data/${ns}/*`), "and printed, showing the prefix it covers");

      const fixed = performance.now();
      await runShell(block("vaultseed.md", "Forbidden", "bao policy write"), {
        ...env,
        POLICY: `seed-${ns}`,
        PREFIX: prefix,
      });
      await waitForReason(client, ns, "billing", "Reconciled", 120_000);
      process.stdout.write(
        `# forbidden: Ready ${((performance.now() - fixed) / 1000).toFixed(1)} s after the documented policy write\n`,
      );
    } finally {
      await target.stop();
      removeTempDir(dir);
    }
  });
});
