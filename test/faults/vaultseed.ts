import type { VaultSeed } from "../../src/apis/vaultseed.js";
import { VaultSeedReason } from "../../src/apis/vaultseed-names.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { findCondition } from "../../src/runtime/conditions.js";
import { VAULTSEED } from "../../src/targets/vault/target.js";
import { baoRequest } from "../../src/testenv/openbao.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { eventually } from "../support/kube.js";
import { applySeed, installVaultSeedCrd, seed, setUpVaultAuth } from "../support/vault.js";
import type { Checkpoints, Lifecycle, PreparedRun, RunContext } from "./lifecycle.js";

// VaultSeed: seed P paths, rotate one key of each, prune one key of each, delete them all
// (deletionPolicy Delete, so a finalizer holds each object until its path is gone).

const GENERATED = ["password", "apiKey", "extra"] as const;

function dataOf(i: number, withExtra: boolean): Record<string, string> {
  return {
    user: `svc-${i}`,
    password: "<random:24>",
    apiKey: "<hex:32>",
    ...(withExtra ? { extra: "<random:12>" } : {}),
  };
}

/** The values a phase left on every path: path index → key → value. */
type Values = Map<number, Record<string, string>>;

export function vaultSeedLifecycle(paths: number): Lifecycle {
  return {
    name: `VaultSeed (${paths} paths)`,
    // Early in the seed phase (its writes are the first third or so of the run's).
    outages: [
      { backend: "kube", at: 0.1, seconds: 30 },
      { backend: "bao", at: 0.1, seconds: 30 },
    ],
    async prepare(ctx: RunContext): Promise<PreparedRun> {
      const { client, namespace: ns } = ctx;
      await installVaultSeedCrd(client);
      const { mount, role } = await setUpVaultAuth(client, ns);
      const bao = sharedEnv().bao;
      const values = new Map<string, Values>();
      const name = (i: number) => `p${String(i).padStart(4, "0")}`;
      const path = (i: number) => `secret/${ns}/${name(i)}`;
      // Generous for a loaded 2-core machine: a phase of 200 paths takes tens of seconds there.
      const phaseMs = 90_000 + paths * 1_500;

      const applyAll = async (spec: (i: number) => Record<string, unknown>) => {
        let next = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next < paths) {
              const i = next++;
              // Through an outage of the API server (a fault of the campaign): tried until it lands.
              await eventually(
                () => applySeed(client, seed(ns, name(i), spec(i))).then(() => true),
                phaseMs,
                `VaultSeed ${name(i)} to be applied`,
              );
            }
          }),
        );
      };
      const specOf = (i: number, phase: "seed" | "rotate" | "prune") => ({
        path: path(i),
        data: dataOf(i, phase !== "prune"),
        prune: true,
        deletionPolicy: "Delete",
        ...(phase === "seed" ? {} : { rotate: { token: "r1", keys: ["password"] } }),
      });

      /**
       * Every object reconciled at its generation, and `done` true of each. What they hold is not
       * waited for but compared afterwards, so a wrong end state is a violation, not a timeout.
       */
      const settled = (what: string, done: (o: VaultSeed) => boolean) =>
        eventually(
          async () => {
            const list = await client.list<VaultSeed>(VAULTSEED, { namespace: ns });
            if (list.items.length !== paths) return undefined;
            const all = list.items.every((o) => {
              const ready = findCondition(o.status?.conditions, "Ready");
              return (
                ready?.status === "True" &&
                ready.reason === VaultSeedReason.Reconciled &&
                ready.observedGeneration === o.metadata.generation &&
                done(o)
              );
            });
            return all ? true : undefined;
          },
          phaseMs,
          `${paths} VaultSeeds to be ${what}`,
        );

      /** The normalised state every path and object is in now; the raw values kept aside under `phase`. */
      const observe = async (phase: string): Promise<unknown> => {
        const list = await client.list<VaultSeed>(VAULTSEED, { namespace: ns });
        const objects = new Map(list.items.map((o) => [o.metadata.name, o]));
        const raw: Values = new Map();
        const state: Record<string, unknown> = {};
        for (let i = 0; i < paths; i++) {
          const data = await baoRequest(bao.addr, "GET", `secret/data/${ns}/${name(i)}`, {
            token: bao.rootToken,
          });
          const meta = await baoRequest(bao.addr, "GET", `secret/metadata/${ns}/${name(i)}`, {
            token: bao.rootToken,
          });
          const kv = (data.body?.data?.data ?? {}) as Record<string, string>;
          raw.set(i, kv);
          const o = objects.get(name(i));
          state[name(i)] = {
            keys: Object.keys(kv).sort(),
            user: kv["user"],
            kvVersion: meta.body?.data?.current_version,
            customMetadata: Object.keys(meta.body?.data?.custom_metadata ?? {}).sort(),
            managedKeys: [...(o?.status?.managedKeys ?? [])].sort(),
            rotationToken: o?.status?.rotationToken,
            finalizers: o?.metadata.finalizers ?? [],
          };
        }
        values.set(phase, raw);
        return state;
      };

      return {
        backends: { bao: bao.addr },
        ignore: { bao: (method, p) => method !== "GET" && /^\/v1\/auth\/[^/]+\/login$/.test(p) },
        section: (proxied) => `  vault:
    namespaces: [${ns}]
    allowDelete: true
    resyncInterval: 30s
    backend:
      address: ${proxied["bao"]}
      allowHttp: true
      auth:
        kubernetes: { mount: ${mount}, role: ${role}, audience: vault, serviceAccount: { namespace: ${ns}, name: ohmlab-controller } }
`,
        async drive(): Promise<Checkpoints> {
          const cp: Checkpoints = new Map();
          await applyAll((i) => specOf(i, "seed"));
          await settled("seeded", () => true);
          cp.set("seeded", await observe("seeded"));
          await applyAll((i) => specOf(i, "rotate"));
          await settled("rotated", (o) => o.status?.rotationToken === "r1");
          cp.set("rotated", await observe("rotated"));
          await applyAll((i) => specOf(i, "prune"));
          await settled("pruned", () => true);
          cp.set("pruned", await observe("pruned"));
          await deleteAll(client, ns, paths);
          await eventually(
            async () =>
              (await client.list(VAULTSEED, { namespace: ns })).items.length === 0 ? true : undefined,
            phaseMs,
            `${paths} VaultSeeds to be deleted (their finalizers cleared)`,
          );
          const left = await baoRequest(bao.addr, "LIST", `secret/metadata/${ns}`, { token: bao.rootToken });
          cp.set("deleted", {
            objectsLeft: 0,
            pathsLeft: left.status === 404 ? [] : ((left.body?.data?.keys ?? []) as string[]).sort(),
          });
          return cp;
        },
        check(): string[] {
          return noValueRegenerated(values, paths, name);
        },
        duringOutage(backend) {
          // What a user would see while it lasts: Ready False with its reason, read past the
          // operator (the harness's own client). With the API server away from the operator it can
          // write no condition at all: there the proof is that the lifecycle ends as without faults.
          const reasons = new Map<string, number>();
          let stopped = false;
          const looking = (async () => {
            while (!stopped) {
              const list = await client.list<VaultSeed>(VAULTSEED, { namespace: ns }).catch(() => undefined);
              for (const o of list?.items ?? []) {
                const ready = findCondition(o.status?.conditions, "Ready");
                if (ready?.status === "False")
                  reasons.set(ready.reason, (reasons.get(ready.reason) ?? 0) + 1);
              }
              await new Promise((r) => setTimeout(r, 500));
            }
          })();
          return {
            async stop() {
              stopped = true;
              await looking;
              const seen = [...reasons].map(([r, n]) => `${r} ×${n}`).join(", ") || "nothing";
              ctx.say(`while ${backend} was down, Ready False seen: ${seen}`);
              if (backend === "kube" || reasons.has(VaultSeedReason.BackendUnavailable)) return [];
              return [
                `while ${backend} was down no VaultSeed said Ready False BackendUnavailable (seen: ${seen})`,
              ];
            },
          };
        },
      };
    },
  };
}

async function deleteAll(client: KubeClient, ns: string, paths: number): Promise<void> {
  for (let i = 0; i < paths; i++)
    await client.delete(VAULTSEED, `p${String(i).padStart(4, "0")}`, ns).catch((e: { code?: number }) => {
      if (e.code !== 404) throw e;
    });
}

/**
 * Seed once holds across crashes: a generated key keeps its first value unless it is rotated, and
 * a rotation generates the key once (a second generation would replace a value someone may already
 * have read). Values are compared, never printed.
 */
function noValueRegenerated(
  values: Map<string, Values>,
  paths: number,
  name: (i: number) => string,
): string[] {
  const out: string[] = [];
  const seeded = values.get("seeded");
  const rotated = values.get("rotated");
  const pruned = values.get("pruned");
  if (!seeded || !rotated || !pruned) return out;
  for (let i = 0; i < paths; i++) {
    const [s, r, p] = [seeded.get(i) ?? {}, rotated.get(i) ?? {}, pruned.get(i) ?? {}];
    for (const k of GENERATED) if (!s[k]) out.push(`${name(i)}: ${k} was not generated`);
    if (s["password"] && s["password"] === r["password"]) out.push(`${name(i)}: password was not rotated`);
    for (const k of ["apiKey", "extra"])
      if (s[k] !== r[k]) out.push(`${name(i)}: ${k} regenerated by the rotation`);
    for (const k of ["password", "apiKey"])
      if (r[k] !== p[k]) out.push(`${name(i)}: ${k} regenerated by the prune`);
  }
  return out;
}
