import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { type NodeNamespace, nodeNamespace } from "../support/node.js";

// The README's install command, as written, against the local node: the one command a reader copies.
// Only the connection is added (--kubeconfig for the node, --wait so the pods are judged).

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The first sh block of a README section, continuation lines joined, split into words as sh does. */
export function readmeCommand(markdown: string, heading: string): string[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  if (!section) throw new Error(`README has no section "## ${heading}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`README section "${heading}" has no sh block`);
  const line = block
    .replace(/\\\n\s*/g, " ")
    .split("\n")[0]!
    .trim();
  const words: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) {
    const word = m[1] ?? m[2] ?? m[3]!;
    // `--set k='{a}'`: the quotes sit inside one word.
    const glued = /^(\S*?)'([^']*)'$/.exec(word);
    words.push(glued ? glued[1]! + glued[2]! : word);
  }
  return words.map((w) => w.replace(/='([^']*)'$/, "=$1"));
}

describe("the README's install command on the local node", () => {
  let ctx: NodeNamespace;
  let words: string[];
  let helm: string;
  const release = () => words[2]!;
  const namespace = () => words[words.indexOf("-n") + 1]!;
  const on = (args: string[]) => runCommand(helm, [...args, "--kubeconfig", ctx.node.kubeconfigPath]);

  before(async () => {
    words = readmeCommand(readFileSync(`${ROOT}/README.md`, "utf8"), "Installing in a cluster");
    helm = await ensureHelm();
    ctx = await nodeNamespace("readme");
  });
  after(async () => {
    if (!ctx) return;
    await on(["uninstall", release(), "-n", namespace(), "--wait", "--timeout", "2m"]).catch(() => {});
    for (const ns of [namespace(), "vault-operator-system"])
      await ctx.kubectl(["delete", "namespace", ns, "--ignore-not-found", "--timeout=120s"]).catch(() => {});
    await ctx.kubectl(["delete", "namespace", ctx.namespace, "--timeout=120s"]).catch(() => {});
  });

  it("installs as written, its pods become ready, and NOTES.txt says what to check", async () => {
    assert.deepEqual(words.slice(0, 4), [
      "helm",
      "install",
      "platform-operator",
      "deploy/chart/platform-operator",
    ]);
    assert.ok(words.includes("--create-namespace"));
    assert.ok(words.includes("targets.vault.namespaces={vault-operator-system}"), words.join(" "));
    // The namespace the vault target is pointed at exists before the operator, as vault-operator makes it.
    await ctx.kubectl(["create", "namespace", "vault-operator-system"]);
    const { stdout } = await runCommand(
      helm,
      [...words.slice(1), "--kubeconfig", ctx.node.kubeconfigPath, "--wait", "--timeout", "5m"],
      { cwd: ROOT },
    );
    assert.match(stdout, /STATUS: deployed/);
    assert.match(stdout, /Deployment platform-operator-vault runs the vault target/);
    assert.match(stdout, /kubectl -n vault-operator-system get vaultseeds/);
    const deployment = JSON.parse(
      await ctx.kubectl(["get", "deployment", "platform-operator-vault", "-n", namespace(), "-o", "json"]),
    ) as { status: { readyReplicas?: number }; spec: { replicas: number } };
    assert.equal(deployment.status.readyReplicas, deployment.spec.replicas);
  });
});
