import type { TargetDefinition } from "../runtime/target.js";

/**
 * The targets this build knows. Names listed as reserved are accepted by the chart's schema
 * upstream but have no implementation yet; asking for one is an error that says so.
 */
const implemented: Record<string, () => Promise<TargetDefinition>> = {};

const notImplemented = new Set(["openbao", "gitlab", "harbor", "sonarqube"]);

export function registerTarget(name: string, load: () => Promise<TargetDefinition>): void {
  implemented[name] = load;
}

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
