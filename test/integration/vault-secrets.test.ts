import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { registry } from "../../src/runtime/metrics.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { addProcess, LeakSearch } from "../support/leak-search.js";
import {
  applySeed,
  getSeed,
  installVaultSeedCrd,
  rootKv,
  seed,
  setUpVaultAuth,
  startVaultTarget,
  waitForPasses,
  waitForReason,
} from "../support/vault.js";

function leaves(tree: unknown, out: string[] = []): string[] {
  if (typeof tree === "string") out.push(tree);
  else if (tree && typeof tree === "object") for (const v of Object.values(tree)) leaves(v, out);
  return out;
}

describe("no secret value leaves OpenBao", () => {
  let client: KubeClient;
  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installVaultSeedCrd(client);
  });
  after(() => client.close());

  it("finds none of the generated or copied values in logs, events, status or metrics", async () => {
    const ns = await freshNamespace(client, "vs-leak");
    await setUpVaultAuth(client, ns);
    const kv = rootKv();
    const target = await startVaultTarget(client, ns);
    try {
      const src = `secret/${ns}/src`;
      await applySeed(client, seed(ns, "src", { path: src, data: { token: "<random:32>" } }));
      await applySeed(
        client,
        seed(ns, "all", {
          path: `secret/${ns}/all`,
          prune: true,
          data: {
            r: "<random:40>",
            h: "<hex:32>",
            u: "<uuid>",
            age: { secret: "<age:secret>", public: "<age:public>" },
            b: "<bcrypt:r>",
            copy: `<ref:${src}#token>`,
          },
        }),
      );
      // Failing states too: their messages and events are where a value would most likely slip.
      await applySeed(
        client,
        seed(ns, "pending", { path: `secret/${ns}/pending`, data: { x: `<ref:secret/${ns}/missing#k>` } }),
      );
      await kv.write(`secret/${ns}/other`, { v: "someone-elses" }, 0);
      await kv.writeMetadata(`secret/${ns}/other`, { "ohmlab.fr/owner": "x/y" });
      await applySeed(client, seed(ns, "owned", { path: `secret/${ns}/other`, data: { v: "<random:12>" } }));
      await waitForReason(client, ns, "all", "Reconciled");
      await waitForReason(client, ns, "pending", "RefPending");
      await waitForReason(client, ns, "owned", "OwnedByAnother");
      // Rotate so that rotation events and logs are in the sample as well.
      await applySeed(
        client,
        seed(ns, "all", {
          path: `secret/${ns}/all`,
          prune: true,
          rotate: { token: "leak-test" },
          data: {
            r: "<random:40>",
            h: "<hex:32>",
            u: "<uuid>",
            age: { secret: "<age:secret>", public: "<age:public>" },
            b: "<bcrypt:r>",
          },
        }),
      );
      // The rotation is done when its token is recorded; two more passes add their logs and events.
      await eventually(async () =>
        (await getSeed(client, ns, "all")).status?.rotationToken === "leak-test" ? true : undefined,
      );
      await waitForPasses(target, ns, "all");

      const secrets = new Set<string>();
      for (const p of ["src", "all"])
        for (const v of leaves((await kv.read(`secret/${ns}/${p}`)).data)) secrets.add(v);
      const history = await kv.read(`secret/${ns}/all`);
      assert.ok(history.version >= 2);
      // Earlier versions of the path too: the values before the rotation and the pruned copy.
      for (let v = 1; v < history.version; v++) {
        const res = await fetch(`${sharedEnv().bao.addr}/v1/secret/data/${ns}/all?version=${v}`, {
          headers: { "X-Vault-Token": sharedEnv().bao.rootToken },
        });
        for (const s of leaves(((await res.json()) as { data: { data: unknown } }).data.data)) secrets.add(s);
      }
      secrets.add("someone-elses");
      const values = [...secrets].filter((s) => s.length >= 8);
      assert.ok(values.length >= 10, `collected ${values.length} values`);

      const search = new LeakSearch();
      await search.addNamespace(client, ns, [
        {
          group: "ohmlab.fr",
          version: "v1alpha1",
          kind: "VaultSeed",
          plural: "vaultseeds",
          namespaced: true,
        },
      ]);
      addProcess(search, target.logs.join("\n"), await registry.metrics());
      assert.ok(search.text("operator log").includes("wrote path"), "the sample holds the write logs");
      assert.ok(JSON.parse(search.text("events (events.k8s.io)")).length >= 3, "the sample holds events");
      search.assertNone(values, "vault");
    } finally {
      await target.stop();
    }
  });
});
