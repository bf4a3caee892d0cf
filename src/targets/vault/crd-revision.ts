import { readFile } from "node:fs/promises";
import { parse } from "yaml";
import { VaultSeedGroup, VaultSeedKind, VaultSeedPlural } from "../../apis/vaultseed-names.js";
import { CUSTOM_RESOURCE_DEFINITION } from "../../runtime/builtin-types.js";
import type { KubeClient } from "../../runtime/client.js";
import { errorMessage } from "../../runtime/errors.js";
import type { Logger } from "../../runtime/log.js";
import type { KubeObject } from "../../runtime/types.js";
import { crdRevision, crdRevisionMismatch } from "./metrics.js";

/**
 * Publishes the schema revision of the served VaultSeed CustomResourceDefinition next to the one this build carries;
 * the OhmlabCRDRevisionMismatch alert fires when they differ (CRDs and image released apart).
 */
export async function publishCrdRevision(
  client: KubeClient,
  log: Logger,
): Promise<{ served: string; expected: string }> {
  const crdName = `${VaultSeedPlural}.${VaultSeedGroup}`;
  const expected = (await expectedRevision()) ?? "unknown";
  let served = "unknown";
  try {
    const crd = await client.get<KubeObject>(CUSTOM_RESOURCE_DEFINITION, crdName);
    served = crd.metadata.annotations?.[SCHEMA_HASH_ANNOTATION] ?? "none";
  } catch (e) {
    log.warn(
      { err: errorMessage(e) },
      "cannot read the VaultSeed CustomResourceDefinition to compare its revision",
    );
  }
  crdRevision.reset();
  crdRevision.set({ target: "vault", crd: crdName, served, expected }, 1);
  crdRevisionMismatch.set({ target: "vault", crd: crdName }, served === expected ? 0 : 1);
  if (served !== expected)
    log.warn(
      { served, expected },
      "the served VaultSeed CustomResourceDefinition is not the revision this build expects",
    );
  return { served, expected };
}

/** The annotation's name, repeated here so the run path need not import the CRD builder. */
const SCHEMA_HASH_ANNOTATION = "platform-operator/schema-hash";

/** deploy/crds/, generated from src/apis and kept identical to it by `npm test`. */
const SHIPPED_CRD = new URL(
  `../../../../deploy/crds/${VaultSeedGroup}_${VaultSeedPlural}.yaml`,
  import.meta.url,
);

/**
 * The schema revision this build carries. Read from the generated CRD shipped with the operator,
 * because building it from the TypeBox schema would keep TypeBox (~7 MiB) in memory for the process's
 * life; without the file (an install that left deploy/ out) it is built after all.
 */
export async function expectedRevision(): Promise<string | undefined> {
  try {
    const crd = parse(await readFile(SHIPPED_CRD, "utf8")) as KubeObject | null;
    const shipped = crd?.metadata?.annotations?.[SCHEMA_HASH_ANNOTATION];
    if (shipped) return shipped;
  } catch {
    // Fall through to building it.
  }
  const { crdFor } = await import("../../apis/index.js");
  return crdFor(VaultSeedKind).metadata.annotations?.[SCHEMA_HASH_ANNOTATION];
}
