/**
 * The fault campaign (`npm run faults`): for each lifecycle, a run without faults records the
 * operator's writes (API server and OpenBao, in order); then, per crash point N, the lifecycle runs
 * again with the operator SIGKILLed right after its Nth write and restarted, and the invariants are
 * checked. Prints the table lifecycle × fault → runs, survived, violations.
 *
 *   npm run faults                       a seeded sample (5 crash points per lifecycle)
 *   npm run faults -- --all              every crash point
 *   npm run faults -- --seed 1234        replays the sample of that seed
 *   npm run faults -- --sample 10 --paths 20
 *   npm run faults -- --outages --no-kills --paths 1000   each lifecycle's outages, one run each
 *   npm run faults -- --openbao --no-kills --outage bao-net --skip backup --skip upgrade --skip restore --skip scale
 *                                        OpenBao black-holed from the operator from its sys/init
 *   npm run faults -- --openbao --seed 7 --sample 3        the OpenBao lifecycle (on the local node)
 *   npm run faults -- --openbao --all --from 1 --to 20     every crash point, in chunks
 *   npm run faults -- --openbao --phase restore --points 7,18-25 --skip upgrade --skip scale
 *                                        exactly those crash points of the phase (one run without faults)
 *   npm run faults -- --openbao --phase restore --sample 4 --skip upgrade --skip scale
 *                                        crash points among one phase's writes, other phases left out
 *   npm run faults -- --openbao --bluegreen --phase bluegreen --sample 3 --skip backup --skip scale
 *                                        the upgrade blue-green (with a pre-promotion hook)
 *   npm run faults -- --openbao --bao-writes --phase create --backend bao --all --skip backup --skip upgrade --skip scale
 *                                        killed after each OpenBao write of the create phase (sys/init, …)
 *   npm run faults -- --openbao --bao-writes --phase scale --backend bao --all --scale-to 1 --skip backup --skip upgrade
 *                                        scale 3 → 1 → 3, killed after each step-down and Raft peer removal
 *
 * VaultSeed and GitLabCore run on a kube-apiserver + etcd and dev-mode OpenBao of its own from the
 * test cache (no node). OpenBao runs only when asked (--openbao): it starts a local node (root),
 * so run it under `flock /tmp/node-test.lock` as every node test.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeClient, loadKubeConfig } from "../../src/runtime/client.js";
import { startControlPlane } from "../../src/testenv/controlplane.js";
import { sharedNode, startSharedNode } from "../../src/testenv/node/shared.js";
import { startDevOpenBao } from "../../src/testenv/openbao.js";
import { SHARED_ENV_VARS } from "../../src/testenv/shared.js";
import { clientFor } from "../support/kube.js";
import { outageChosen, parseFaultArgs } from "./args.js";
import { type CampaignOptions, campaignRows, type Row, table } from "./campaign.js";
import { gitLabCoreLifecycle } from "./gitlabcore.js";
import type { Lifecycle } from "./lifecycle.js";
import { FULL_OPENBAO, openBaoLifecycle } from "./openbao.js";
import { vaultSeedLifecycle } from "./vaultseed.js";

const say = (l: string) => process.stderr.write(`[faults] ${l}\n`);

async function main(): Promise<number> {
  const args = parseFaultArgs(process.argv.slice(2), Date.now());
  if (args.scaleTo === FULL_OPENBAO.voters)
    throw new Error(`--scale-to: must differ from the ${FULL_OPENBAO.voters} voters the cluster starts with`);
  say(
    `seed ${args.seed} (replay with --seed ${args.seed})${args.all ? ", every crash point" : `, ${args.sample} crash points per lifecycle`}`,
  );
  const chosen = (l: Lifecycle) => args.only.some((o) => l.name.toLowerCase().startsWith(o));
  const onApi = [vaultSeedLifecycle(args.paths), gitLabCoreLifecycle()].filter(
    (l) => args.only.length === 0 || chosen(l),
  );
  const onNode = [
    openBaoLifecycle({
      ...FULL_OPENBAO,
      backup: !args.skip.includes("backup"),
      upgrade: !args.skip.includes("upgrade"),
      blueGreen: args.blueGreen,
      baoWrites: args.baoWrites,
      restore: !args.skip.includes("restore"),
      scaleTo: args.skip.includes("scale") ? undefined : (args.scaleTo ?? FULL_OPENBAO.scaleTo),
    }),
  ].filter(chosen);
  const rows: Row[] = [];
  const common = {
    all: args.all,
    from: args.from,
    to: args.to,
    phase: args.phase,
    points: args.points,
    backend: args.backend,
    kinds: args.kinds,
    sample: args.sample,
    seed: args.seed,
    kills: args.kills,
    outages: args.outages,
    outageChosen: (o) => outageChosen(args.outageFilter, o),
    say,
  } satisfies Omit<CampaignOptions, "client">;
  if (onApi.length > 0) {
    const cp = await startControlPlane({ log: say });
    const bao = await startDevOpenBao();
    try {
      const caFile = join(cp.dir, "ca.crt");
      writeFileSync(caFile, cp.caPem);
      // The test support helpers read the environment the way test files do.
      const v = SHARED_ENV_VARS;
      Object.assign(process.env, {
        [v.kubeconfig]: cp.kubeconfigPath,
        [v.server]: cp.server,
        [v.caFile]: caFile,
        [v.issuer]: cp.issuer,
        [v.baoAddr]: bao.addr,
        [v.baoToken]: bao.rootToken,
        [v.baoVersion]: bao.version,
      });
      const client = new KubeClient(loadKubeConfig(cp.kubeconfigPath), "faults", {
        rateLimit: { qps: 200, burst: 200 },
      });
      for (const l of onApi)
        rows.push(
          ...(await campaignRows(l, {
            ...common,
            client,
            apiServer: { stop: () => cp.stopApiServer(), start: () => cp.startApiServer() },
          })),
        );
    } finally {
      await bao.stop();
      await cp.stop();
    }
  }
  if (onNode.length > 0) {
    // The node as test/run starts it for node tests; its helpers find it through the state file.
    const node = startSharedNode(say);
    Object.assign(process.env, node.variables);
    try {
      await node.settled;
      const client = clientFor((await sharedNode()).kubeconfigPath);
      for (const l of onNode) rows.push(...(await campaignRows(l, { ...common, client })));
    } finally {
      await node.stop();
    }
  }
  console.log(`\nfault campaign, seed ${args.seed}, ${new Date().toISOString().slice(0, 10)}\n`);
  console.log(table(rows));
  for (const r of rows)
    for (const f of r.failures) {
      console.log(
        `\n${r.lifecycle}, ${f.outage ? `${f.outage.label ?? f.outage.backend} (after write ${f.outageAfterWrite ?? f.outage.afterWrite ?? "?"})` : f.crashAt === undefined ? "run without faults" : `kill after write ${f.crashAt}`}:`,
      );
      for (const v of f.violations) console.log(`  - ${v}`);
      if (f.operatorTail)
        console.log(`  operator's last output:\n${f.operatorTail.split("\n").slice(-20).join("\n")}`);
    }
  return rows.some((r) => r.violations > 0) ? 1 : 0;
}

process.exitCode = await main();
