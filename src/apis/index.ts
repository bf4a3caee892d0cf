/**
 * The kinds this operator serves. Each kind's TypeScript type and its CRD come from the one TypeBox
 * schema in its own file; this module lists them for the CLI, the tests and anything that needs
 * "every kind". Writing the files lives in `write.ts`, which the CLI imports on its own.
 */
import type { TObject } from "@sinclair/typebox";
import { buildCrd, type CustomResourceDefinition, type KindDefinition } from "./crd.js";
import { GitLabCoreDefinition } from "./gitlabcore.js";
import { GitLabSecretsDefinition } from "./gitlabsecrets.js";
import { OpenBaoClusterDefinition } from "./openbaocluster.js";
import { OpenBaoRestoreDefinition } from "./openbaorestore.js";
import { OpenBaoTenantDefinition } from "./openbaotenant.js";
import { VaultSeedDefinition } from "./vaultseed.js";

/**
 * One served kind. The first five fields have the runtime's ResourceType shape, so a descriptor can
 * be handed straight to the client.
 */
export interface KindDescriptor {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  apiVersion: string;
  shortNames: readonly string[];
  /** The TypeBox schema of the whole object, for Value.Check, Value.Errors and Value.Default. */
  schema: TObject;
  crd: CustomResourceDefinition;
}

function describe(def: KindDefinition): KindDescriptor {
  return Object.freeze({
    group: def.group,
    version: def.version,
    kind: def.kind,
    plural: def.plural,
    namespaced: def.scope === "Namespaced",
    apiVersion: `${def.group}/${def.version}`,
    shortNames: Object.freeze([...(def.shortNames ?? [])]),
    schema: def.schema,
    crd: buildCrd(def),
  });
}

export const allKinds: readonly KindDescriptor[] = Object.freeze(
  [
    VaultSeedDefinition,
    GitLabCoreDefinition,
    GitLabSecretsDefinition,
    OpenBaoClusterDefinition,
    OpenBaoRestoreDefinition,
    OpenBaoTenantDefinition,
  ].map(describe),
);

/** Finds a kind by its Kind name, plural, or `<plural>.<group>`; undefined for anything else. */
export function kindFor(name: string): KindDescriptor | undefined {
  return allKinds.find((k) => k.kind === name || k.plural === name || `${k.plural}.${k.group}` === name);
}

/** The CRD of a kind (by Kind name, plural or `<plural>.<group>`). Throws for a kind this operator does not serve. */
export function crdFor(kind: string): CustomResourceDefinition {
  const found = kindFor(kind);
  if (!found) {
    throw new Error(`unknown kind "${kind}"; known kinds: ${allKinds.map((k) => k.kind).join(", ")}`);
  }
  return found.crd;
}

export * from "./common.js";
export * from "./crd.js";
export * from "./gitlabcore.js";
export * from "./gitlabsecrets.js";
export * from "./openbaocluster.js";
export * from "./openbaorestore.js";
export * from "./openbaotenant.js";
export * from "./validate.js";
export * from "./vaultseed.js";
