import type { VaultSeed } from "../../apis/vaultseed.js";
import {
  VaultSeedGroup,
  VaultSeedKind,
  VaultSeedManagers,
  VaultSeedPlural,
  VaultSeedVersion,
} from "../../apis/vaultseed-names.js";
import { Controller, generationChanged } from "../../runtime/controller.js";
import type { Manager } from "../../runtime/manager.js";
import type { TargetDefinition } from "../../runtime/target.js";
import type { ResourceType } from "../../runtime/types.js";
import { jwtFromFile, jwtFromTokenRequest, KubernetesAuth, StaticToken, type TokenSource } from "./auth.js";
import { BaoHttp } from "./bao-http.js";
import { PathClaims } from "./claims.js";
import { parseVaultConfig, type VaultTargetConfig } from "./config.js";
import { publishCrdRevision } from "./crd-revision.js";
import { createGenerator } from "./generate.js";
import { KvClient } from "./kv.js";
import { MountDirectory } from "./mounts.js";
import { PathPasses } from "./path-passes.js";
import { ReadCache } from "./read-cache.js";
import { type KvBackend, VaultSeedReconciler } from "./reconciler.js";
import { RefGraph } from "./ref-graph.js";
import { admits } from "./scope.js";
import { type CompiledSeed, validateDocuments } from "./validate.js";

export const VAULTSEED: ResourceType = {
  group: VaultSeedGroup,
  version: VaultSeedVersion,
  kind: VaultSeedKind,
  plural: VaultSeedPlural,
  namespaced: true,
};

export const CONTROLLER_NAME = VaultSeedManagers.controller;

/** Test seam: replace the KV client (e.g. to act between a read and a write). */
export interface VaultTargetHooks {
  wrapKv?: (kv: KvBackend) => KvBackend;
  /** The clock the reconciler reads (rotate.every), so a test moves time without sleeping. */
  now?: () => Date;
}

/** Builds the vault target; `hooks` exist for tests only. */
export function vaultTarget(hooks: VaultTargetHooks = {}): TargetDefinition<VaultTargetConfig> {
  const closers: (() => void)[] = [];
  return {
    name: "vault",
    parseConfig: parseVaultConfig,
    validate: (docs) => validateDocuments(docs),
    async setup(manager: Manager, config: VaultTargetConfig) {
      const http = new BaoHttp({
        address: config.backend.address,
        caPem: config.backend.caPem,
        target: "vault",
      });
      closers.push(() => http.close());
      const auth = config.backend.auth;
      let tokens: TokenSource;
      if (auth.kind === "token") tokens = new StaticToken(auth.token);
      else {
        const jwt = auth.tokenFile
          ? jwtFromFile(auth.tokenFile)
          : jwtFromTokenRequest(
              manager.client,
              auth.serviceAccount!.namespace,
              auth.serviceAccount!.name,
              auth.audience,
            );
        tokens = new KubernetesAuth(http, { mount: auth.mount, role: auth.role, jwt });
      }
      const client = new KvClient(http, tokens);
      const kv = hooks.wrapKv ? hooks.wrapKv(client) : client;
      const cacheMs = Math.min(60_000, config.resyncMs / 2);
      // Application namespaces are watched too, whether or not the namespace list names them.
      const watched = manager.namespaces;
      const unwatched = [...config.applications.keys()].filter((ns) => watched && !watched.includes(ns));
      if (watched && unwatched.length > 0) manager.setNamespaces([...watched, ...unwatched]);
      const informer = manager.informer<VaultSeed>(VAULTSEED);
      // Loaded on the first review: the decision reads the CRD's schema, which `run` alone never loads.
      manager.admission.register(VaultSeedGroup, VaultSeedKind, async (request) =>
        (await import("./admission.js")).vaultSeedVerdict(
          request,
          () => informer.list(),
          config.applications,
        ),
      );
      const admitted = (namespace: string, seed: CompiledSeed) =>
        admits(
          config.applications,
          namespace,
          seed.path,
          seed.refs.map((r) => r.path),
        );
      const controller: Controller = new Controller({
        name: CONTROLLER_NAME,
        log: manager.log,
        concurrency: config.concurrency,
        reconcile: (key, ctx) => reconciler.reconcile(key, ctx),
      });
      const refs = new RefGraph(informer, admitted);
      const reconciler = new VaultSeedReconciler({
        type: VAULTSEED,
        client: manager.client,
        informer,
        kv,
        events: manager.events,
        config,
        generator: createGenerator(),
        reads: new ReadCache(cacheMs, Date.now, undefined, (path) => refs.isSource(path)),
        refs,
        mounts: new MountDirectory((mount) => client.describeMount(mount), cacheMs),
        claims: new PathClaims(informer, admitted),
        enqueue: (key) => controller.queue.add(key),
        passes: new PathPasses(),
        now: hooks.now,
      });
      await publishCrdRevision(manager.client, manager.log);
      // Read again at the resync's pace: an upgraded CRD clears OhmlabCRDRevisionMismatch without
      // a restart of the process, and a CRD rolled back under a running one raises it.
      const recheck = setInterval(() => {
        publishCrdRevision(manager.client, manager.log).catch(() => {});
      }, config.resyncMs);
      recheck.unref();
      closers.push(() => clearInterval(recheck));
      // Status writes bump the resourceVersion but not the generation: they must not retrigger.
      controller.watchPrimary(informer, generationChanged);
      manager.add(controller);
    },
    async close() {
      for (const c of closers.splice(0)) c();
    },
  };
}
