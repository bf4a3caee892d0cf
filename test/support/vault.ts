import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { VaultSeed } from "../../src/apis/vaultseed.js";
import { CUSTOM_RESOURCE_DEFINITION, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { findCondition } from "../../src/runtime/conditions.js";
import { createLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { StaticToken } from "../../src/targets/vault/auth.js";
import { BaoHttp } from "../../src/targets/vault/bao-http.js";
import { parseVaultConfig } from "../../src/targets/vault/config.js";
import { KvClient } from "../../src/targets/vault/kv.js";
import type { KvBackend } from "../../src/targets/vault/reconciler.js";
import { VAULTSEED, type VaultTargetHooks, vaultTarget } from "../../src/targets/vault/target.js";
import { configureKubernetesAuth } from "../../src/testenv/openbao.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "./kube.js";

/** Installs the checked-in VaultSeed CUSTOM_RESOURCE_DEFINITION (idempotent) and waits until it is served. */
export async function installVaultSeedCrd(client: KubeClient): Promise<void> {
  const file = fileURLToPath(new URL("../../../deploy/crds/ohmlab.fr_vaultseeds.yaml", import.meta.url));
  const crd = parse(readFileSync(file, "utf8")) as KubeObject;
  await client.apply(CUSTOM_RESOURCE_DEFINITION, crd, { fieldManager: "test-setup", force: true });
  await eventually(
    async () => {
      client.resources.refresh();
      return client.resources.find("ohmlab.fr/v1alpha1", "VaultSeed");
    },
    20_000,
    "the VaultSeed CUSTOM_RESOURCE_DEFINITION to be served",
  );
}

export interface TargetOptions {
  observeOnly?: boolean;
  allowDelete?: boolean;
  resyncInterval?: string;
  hooks?: VaultTargetHooks;
  /** Login role; default: the namespace's role with full access to the test prefix. */
  role?: string;
  /** Backend address; default: the shared dev OpenBao. */
  address?: string;
  /** targets.vault.applications: application namespaces and their prefixes. */
  applications?: Record<string, { write: string[]; read?: string[] }>;
  /** More namespaces to watch besides `ns` (application namespaces, typically). */
  alsoWatch?: string[];
}

export interface RunningTarget {
  manager: Manager;
  logs: string[];
  stop(): Promise<void>;
}

/** A KV client with the root token, for assertions and for "a person" editing paths by hand. */
export function rootKv(address = sharedEnv().bao.addr, token = sharedEnv().bao.rootToken): KvClient {
  return new KvClient(new BaoHttp({ address, target: "test-root" }), new StaticToken(token));
}

/**
 * Kubernetes auth for one test namespace on the shared OpenBao: its own auth mount, a role bound to
 * the namespace's `ohmlab-controller` ServiceAccount with audience "vault", and a policy on
 * `secret/<ns>/*` only (data and metadata, delete included).
 */
export async function setUpVaultAuth(
  client: KubeClient,
  ns: string,
  address?: string,
  rootToken?: string,
  ttl = "15m",
): Promise<{ mount: string; role: string }> {
  const env = sharedEnv();
  await client.apply(
    SERVICE_ACCOUNT,
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "ohmlab-controller", namespace: ns } },
    { fieldManager: "test-setup" },
  );
  const policy = `path "secret/data/${ns}/*" { capabilities = ["create", "read", "update"] }
path "secret/metadata/${ns}/*" { capabilities = ["create", "read", "update", "delete"] }
path "sys/policies/password/+/generate" { capabilities = ["read"] }`;
  return configureKubernetesAuth(
    { addr: address ?? env.bao.addr, rootToken: rootToken ?? env.bao.rootToken },
    { server: env.server, caPem: env.caPem, kubeconfigPath: env.kubeconfigPath },
    {
      mount: `k8s-${ns}`,
      role: "ohmlab-controller",
      serviceAccount: "ohmlab-controller",
      namespace: ns,
      audience: "vault",
      policies: [`seed-${ns}`],
      policyHcl: { [`seed-${ns}`]: policy },
      ttl,
    },
  );
}

/** Runs the vault target in this process, watching `ns` only, with logs captured as JSON lines. */
export async function startVaultTarget(
  client: KubeClient,
  ns: string,
  opts: TargetOptions = {},
): Promise<RunningTarget> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  // The operator's own logger, safety net included: what a deployed operator would print.
  const log = createLogger({ level: "debug", stream: sink });
  const def = vaultTarget(opts.hooks);
  const config = def.parseConfig(
    {
      observeOnly: opts.observeOnly ?? false,
      allowDelete: opts.allowDelete ?? false,
      resyncInterval: opts.resyncInterval ?? "2s",
      ...(opts.applications ? { applications: opts.applications } : {}),
      backend: {
        address: opts.address ?? sharedEnv().bao.addr,
        allowHttp: true,
        auth: {
          kubernetes: {
            mount: `k8s-${ns}`,
            role: opts.role ?? "ohmlab-controller",
            audience: "vault",
            serviceAccount: { namespace: ns, name: "ohmlab-controller" },
          },
        },
      },
    },
    "targets.vault",
  );
  const manager = new Manager({
    target: "vault",
    client,
    log,
    namespaces: [ns, ...(opts.alsoWatch ?? [])],
  });
  await def.setup(manager, config);
  await manager.start();
  return {
    manager,
    logs,
    async stop() {
      await manager.stop();
      await def.close?.();
    },
  };
}

export const parseConfigForTest = parseVaultConfig;

export function seed(ns: string, name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: "ohmlab.fr/v1alpha1", kind: "VaultSeed", metadata: { name, namespace: ns }, spec };
}

export async function applySeed(client: KubeClient, obj: KubeObject): Promise<VaultSeed> {
  return client.apply<VaultSeed>(VAULTSEED, obj, { fieldManager: "test-user", force: true });
}

export async function getSeed(client: KubeClient, ns: string, name: string): Promise<VaultSeed> {
  return client.get<VaultSeed>(VAULTSEED, name, ns);
}

/** Waits until the object's Ready condition has `reason` for its current generation. */
export async function waitForReason(
  client: KubeClient,
  ns: string,
  name: string,
  reason: string,
  timeoutMs = 20_000,
): Promise<VaultSeed> {
  return eventually(
    async () => {
      const o = await getSeed(client, ns, name);
      const ready = findCondition(o.status?.conditions, "Ready");
      return ready?.reason === reason && ready.observedGeneration === o.metadata.generation ? o : undefined;
    },
    timeoutMs,
    `${ns}/${name} to report ${reason}`,
  );
}

export function condition(o: VaultSeed, type: string) {
  return findCondition(o.status?.conditions, type);
}

export interface VaultSuite {
  client: KubeClient;
  ns: string;
  kv: KvClient;
}

/** What most VaultSeed test files start with: a client, the CRD, a fresh namespace with its login role. */
export async function vaultSuite(prefix: string): Promise<VaultSuite> {
  const client = clientFor(sharedEnv().kubeconfigPath);
  await installVaultSeedCrd(client);
  const ns = await freshNamespace(client, prefix);
  await setUpVaultAuth(client, ns);
  return { client, ns, kv: rootKv() };
}

/**
 * Counts the controller's own reads of each path through the target's KV seam. Every reconcile of
 * an object reads its path once, so "n more reads" proves n more reconciles happened: tests wait
 * for that instead of sleeping through resyncs.
 */
export function readCounter(wrap?: (kv: KvBackend) => KvBackend): {
  hooks: VaultTargetHooks;
  reads(path: string): number;
  waitForReads(path: string, more: number, timeoutMs?: number): Promise<void>;
} {
  const counts = new Map<string, number>();
  const hooks: VaultTargetHooks = {
    wrapKv(inner) {
      const base = wrap ? wrap(inner) : inner;
      return {
        read: async (p) => {
          const s = await base.read(p);
          counts.set(p, (counts.get(p) ?? 0) + 1);
          return s;
        },
        write: (p, d, cas) => base.write(p, d, cas),
        writeMetadata: (p, m) => base.writeMetadata(p, m),
        deleteAll: (p) => base.deleteAll(p),
        generatePassword: (name, signal) => base.generatePassword!(name, signal),
      };
    },
  };
  const reads = (path: string) => counts.get(path) ?? 0;
  return {
    hooks,
    reads,
    async waitForReads(path, more, timeoutMs = 30_000) {
      const target = reads(path) + more;
      await eventually(
        () => (reads(path) >= target ? true : undefined),
        timeoutMs,
        `${more} reads of ${path}`,
      );
    },
  };
}

/** Passes of `ns/name` the target has finished, from its debug log ("reconciled", one per pass). */
export function passesOf(target: RunningTarget, ns: string, name: string): number {
  const key = `${ns}/${name}`;
  let n = 0;
  for (const line of target.logs) {
    if (!line.includes('"reconciled"')) continue;
    const entry = JSON.parse(line) as { msg?: string; object?: string };
    if (entry.msg === "reconciled" && entry.object === key) n++;
  }
  return n;
}

/**
 * Waits until the target has finished `n` more passes of `ns/name`. With two or more, at least one
 * pass began after this call and saw everything done before it, so "nothing changed" can be
 * asserted right after; a stalled controller fails here instead of passing by default.
 */
export async function waitForPasses(
  target: RunningTarget,
  ns: string,
  name: string,
  n = 2,
  timeoutMs = 30_000,
): Promise<void> {
  const start = passesOf(target, ns, name);
  await eventually(
    () => (passesOf(target, ns, name) >= start + n ? true : undefined),
    timeoutMs,
    `${n} more reconcile passes of ${ns}/${name}`,
  );
}
