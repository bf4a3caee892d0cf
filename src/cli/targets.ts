import { VaultSeedKind } from "../apis/vaultseed-names.js";
import type { ManifestDocument, ManifestProblem, TargetDefinition } from "../runtime/target.js";

/**
 * The targets this build knows, each loaded on first use so a process only loads what it runs, with
 * the kinds it reconciles (so `npm start` can say what will and will not be acted on). Reserved
 * names have no implementation yet; asking for one is an error that says so. Kinds are named, not
 * taken from the schemas, so that `run` never loads TypeBox (a unit test holds them to the schemas).
 */
const implemented: Record<string, { kinds: string[]; load: () => Promise<TargetDefinition> }> = {
  vault: {
    kinds: [VaultSeedKind],
    load: async () => (await import("../targets/vault/target.js")).vaultTarget() as TargetDefinition,
  },
  openbao: {
    kinds: ["OpenBaoCluster", "OpenBaoRestore"],
    load: async () => (await import("../targets/openbao/target.js")).openbaoTarget() as TargetDefinition,
  },
  gitlab: {
    kinds: ["GitLabCore", "GitLabSecrets"],
    load: async () => (await import("../targets/gitlab/target.js")).gitlabTarget() as TargetDefinition,
  },
};

const notImplemented: Record<string, string[]> = {
  harbor: [],
  sonarqube: [],
};

/** Kinds an implemented target reconciles only when its configuration turns them on. */
const optionalKinds: Record<string, { target: string; when: string }> = {
  OpenBaoTenant: {
    target: "openbao",
    when: "targets.openbao.tenants.enabled (the chart's tenancy.mode: multi)",
  },
};

/** The kinds a target reconciles only when configured to, each with the setting that does it. */
export const optionalKindsOf = (target: string): { kind: string; when: string }[] =>
  Object.entries(optionalKinds)
    .filter(([, o]) => o.target === target)
    .map(([kind, o]) => ({ kind, when: o.when }));

/** The target that reconciles a kind only when configured to, and the setting that does it. */
export const optionalKindOf = (kind: string): { target: string; when: string } | undefined =>
  optionalKinds[kind];

export const knownTargetNames = (): string[] =>
  [...Object.keys(implemented), ...Object.keys(notImplemented)].sort();

export const implementedTargetNames = (): string[] => Object.keys(implemented).sort();

/** The kinds the named targets reconcile. */
export const kindsOf = (names: string[]): string[] => names.flatMap((n) => implemented[n]?.kinds ?? []);

/** The implemented target a kind belongs to (whether or not this process runs it). */
export const implementedTargetOf = (kind: string): string | undefined =>
  Object.entries(implemented).find(([, t]) => t.kinds.includes(kind))?.[0];

/** The reserved target a kind belongs to, for saying why nothing reconciles it. */
export const reservedTargetOf = (kind: string): string | undefined =>
  Object.entries(notImplemented).find(([, kinds]) => kinds.includes(kind))?.[0];

export async function loadTarget(name: string): Promise<TargetDefinition> {
  const entry = implemented[name];
  if (entry) return entry.load();
  if (name in notImplemented) throw new Error(`target "${name}": not implemented yet`);
  throw new Error(`target "${name}": unknown target (known: ${knownTargetNames().join(", ")})`);
}

export async function loadImplementedTargets(): Promise<TargetDefinition[]> {
  return Promise.all(Object.values(implemented).map((t) => t.load()));
}

type Validator = (docs: ManifestDocument[]) => ManifestProblem[];

/**
 * Offline checks of kinds whose target does not bring its own yet (not implemented, or implemented
 * without `validate`), so `validate` covers them already; a target's own `validate` replaces them.
 */
const validateOnly: Record<string, () => Promise<Validator>> = {
  openbao: async () => (await import("../targets/openbao/validate/index.js")).validateOpenBaoDocuments,
};

/** Every offline manifest check this build has: the implemented targets' and the validate-only ones. */
export async function loadValidators(): Promise<Validator[]> {
  const targets = await loadImplementedTargets();
  const fromTargets = targets.flatMap((t) =>
    t.validate ? [(docs: ManifestDocument[]) => t.validate!(docs)] : [],
  );
  const covered = new Set(targets.filter((t) => t.validate).map((t) => t.name));
  const pending = Object.entries(validateOnly).filter(([name]) => !covered.has(name));
  return [...fromTargets, ...(await Promise.all(pending.map(([, load]) => load())))];
}
