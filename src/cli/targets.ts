import type { TargetDefinition } from "../runtime/target.js";

/**
 * The targets this build knows, each loaded on first use so a process only loads what it runs.
 * Reserved names have no implementation yet; asking for one is an error that says so.
 */
const implemented: Record<string, () => Promise<TargetDefinition>> = {
  vault: async () => (await import("../targets/vault/target.js")).vaultTarget() as TargetDefinition,
};

const notImplemented = new Set(["openbao", "gitlab", "harbor", "sonarqube"]);

export const knownTargetNames = (): string[] => [...Object.keys(implemented), ...notImplemented].sort();

export async function loadTarget(name: string): Promise<TargetDefinition> {
  const load = implemented[name];
  if (load) return load();
  if (notImplemented.has(name)) throw new Error(`target "${name}": not implemented yet`);
  throw new Error(`target "${name}": unknown target (known: ${knownTargetNames().join(", ")})`);
}

export async function loadImplementedTargets(): Promise<TargetDefinition[]> {
  return Promise.all(Object.values(implemented).map((l) => l()));
}
