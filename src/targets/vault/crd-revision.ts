import { crdFor, SCHEMA_HASH_ANNOTATION } from "../../apis/index.js";
import { CUSTOM_RESOURCE_DEFINITION } from "../../runtime/builtin-types.js";
import type { KubeClient } from "../../runtime/client.js";
import { errorMessage } from "../../runtime/errors.js";
import type { Logger } from "../../runtime/log.js";
import type { KubeObject } from "../../runtime/types.js";
import { crdRevision, crdRevisionMismatch } from "./metrics.js";

/**
 * Publishes the schema revision of the served VaultSeed CUSTOM_RESOURCE_DEFINITION next to the one this build carries;
 * the OhmlabCRDRevisionMismatch alert fires when they differ (CRDs and image released apart).
 */
export async function publishCrdRevision(
  client: KubeClient,
  log: Logger,
): Promise<{ served: string; expected: string }> {
  const expectedCrd = crdFor("VaultSeed");
  const expected = expectedCrd.metadata.annotations?.[SCHEMA_HASH_ANNOTATION] ?? "unknown";
  let served = "unknown";
  try {
    const crd = await client.get<KubeObject>(CUSTOM_RESOURCE_DEFINITION, expectedCrd.metadata.name);
    served = crd.metadata.annotations?.[SCHEMA_HASH_ANNOTATION] ?? "none";
  } catch (e) {
    log.warn(
      { err: errorMessage(e) },
      "cannot read the VaultSeed CUSTOM_RESOURCE_DEFINITION to compare its revision",
    );
  }
  crdRevision.reset();
  crdRevision.set({ target: "vault", crd: expectedCrd.metadata.name, served, expected }, 1);
  crdRevisionMismatch.set({ target: "vault", crd: expectedCrd.metadata.name }, served === expected ? 0 : 1);
  if (served !== expected)
    log.warn(
      { served, expected },
      "the served VaultSeed CUSTOM_RESOURCE_DEFINITION is not the revision this build expects",
    );
  return { served, expected };
}
