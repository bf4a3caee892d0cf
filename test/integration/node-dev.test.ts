import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { REGISTRY_DIR } from "../../src/testenv/node/registry.js";

const MAIN = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const FORMED = /\[dev\] openbao openbao\/secrets formed: 3 initialized Raft voters/;
const GITLAB_RUNNING = /\[dev\] gitlab gitlab-system\/gitlab: phase Running/;

describe("npm start -- --node (platform-operator dev --node)", () => {
  it("runs the local default on a node of its own, seeds the samples, forms the sample OpenBao cluster, and cleans up", async () => {
    const child = spawn(process.execPath, [MAIN, "dev", "--node"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let onOutput = () => {};
    for (const stream of [child.stdout, child.stderr])
      stream.on("data", (c) => {
        out += String(c);
        onOutput();
      });
    const exited = new Promise<number | null>((r) => child.once("exit", r));
    // What a user waits for: the line saying the cluster has formed. Then Ctrl-C, as they would.
    const formed = new Promise<void>((resolve) => {
      onOutput = () => (FORMED.test(out) && GITLAB_RUNNING.test(out) ? resolve() : undefined);
    });
    await Promise.race([
      formed,
      exited.then(() => assert.fail(`dev ended before the cluster formed and GitLab ran:\n${out}`)),
    ]);
    child.kill("SIGINT");
    const code = await exited;
    assert.equal(code, 0, out);

    const index = /\[dev\] node (\d+): CoreDNS ready/.exec(out)?.[1];
    assert.ok(index, `the node came up:\n${out}`);
    assert.match(out, /\[dev\] pods kube-system: .*coredns-\S+ Running 1\/1/);
    assert.match(
      out,
      /\[dev\] targets running: vault \(VaultSeed\); openbao \(OpenBaoCluster, OpenBaoRestore; OpenBaoTenant off: needs targets\.openbao\.tenants\.enabled [^)]*\)\); gitlab \(GitLabCore, GitLabSecrets\)/,
    );
    // Each process serves its kinds' admission webhook, and the samples were admitted through them.
    assert.match(
      out,
      /\[dev\] admission webhook of vault, gitlab: https:\/\/10\.250\.0\.\d+:\d+\/validate \(failurePolicy Fail\)/,
    );
    assert.match(
      out,
      /\[dev\] admission webhook of openbao: https:\/\/10\.250\.0\.\d+:9443\/validate \(failurePolicy Fail\)/,
    );
    // The GitLabCore sample on the bundled fixture chart: its progress, its hooks in Helm's order.
    assert.match(out, /gitlabcore\.yaml on the local node: spec\.networking left out/);
    const gitlab = out.split("\n").filter((l) => l.startsWith("[dev] gitlab gitlab-system/gitlab: "));
    const order = [
      "version resolved: chart 10.4.0",
      "hooks: ChartRendered",
      "objects applied",
      "phase Running",
    ];
    let at = -1;
    for (const step of order) {
      const i = gitlab.findIndex((l, j) => j > at && l.includes(step));
      assert.ok(i > at, `gitlab progress "${step}" in order:\n${gitlab.join("\n")}`);
      at = i;
    }
    // Summarised pods: a line per namespace when it settles, not one per change of any pod.
    const podLines = out.split("\n").filter((l) => l.startsWith("[dev] pods "));
    assert.ok(podLines.length < 40, `${podLines.length} pod lines:\n${podLines.join("\n")}`);
    // The vault target still seeds its samples against the dev OpenBao.
    assert.match(out, /wrote path .*staging-core-keycloak/);
    // The OpenBaoCluster sample, with each change the node needs named.
    const version = BAO_DEFAULT_VERSION.replaceAll(".", "\\.");
    assert.match(
      out,
      new RegExp(`openbaocluster\\.yaml on the local node: spec\\.version \\S+ → ${version}`),
    );
    assert.match(out, /openbaocluster\.yaml on the local node: spec\.selfInit left out/);
    // It is seen forming: uninitialized first, then OpenBao's own Raft list with the three pods as
    // voters, and a leader; the pods appear in the kubectl watch.
    const progress = out.split("\n").filter((l) => l.startsWith("[dev] openbao openbao/secrets: "));
    const firstUninitialized = progress.findIndex((l) => l.includes("initialized no"));
    const done = progress.findIndex((l) =>
      /initialized yes, 3\/3 voter pods ready, Raft voters 3 \(secrets-0, secrets-1, secrets-2\), active leader secrets-\d .*\| formed$/.test(
        l,
      ),
    );
    assert.ok(firstUninitialized >= 0, `no progress line before initialization:\n${progress.join("\n")}`);
    assert.ok(done > firstUninitialized, `no formed line after it:\n${progress.join("\n")}`);
    for (const i of [0, 1, 2])
      assert.match(out, new RegExp(`\\[dev\\] pods openbao: .*secrets-${i} Running`));
    assert.match(out, /\[dev\] stopped/);
    // The cluster's root token stays in its Secret: no token is printed but the dev OpenBao's own.
    const printed = out.split("\n").filter((l) => !l.includes("dev root token"));
    assert.ok(!printed.some((l) => /\bs\.[A-Za-z0-9]{20,}/.test(l)), "a token in the output");

    // Its node is gone: record released, veth removed. Node tests run side by side, so another node
    // may already have taken the freed number; then the record names that node's process, not ours.
    const record = join(REGISTRY_DIR, `node-${index}.json`);
    const reused = existsSync(record) && JSON.parse(readFileSync(record, "utf8")).ownerPid !== child.pid;
    if (!reused) {
      assert.ok(!existsSync(record), `node ${index}'s record is still there`);
      const links = execFileSync("ip", ["-o", "link", "show"], { encoding: "utf8" });
      assert.ok(!links.includes(`ponode${index}h`), links);
    }
  });
});
