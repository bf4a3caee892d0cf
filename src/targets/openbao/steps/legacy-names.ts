import type { Informer } from "../../../runtime/informer.js";
import type { KubeObject } from "../../../runtime/types.js";
import { cached, removeOwned, type Writes } from "../apply.js";
import type { ServiceContext } from "../services.js";

/**
 * A PodDisruptionBudget under the name it had before the names followed upstream (`<name>`,
 * `<name>-read`), deleted once its successor is applied. Read from the cache alone: a cluster that
 * never had one costs no request.
 */
export async function retireLegacyPdb(
  ctx: ServiceContext,
  writes: Writes,
  pdbs: Informer<KubeObject>,
  namespace: string,
  name: string,
): Promise<void> {
  const live = cached(pdbs, namespace, name);
  if (!live) return;
  await removeOwned(
    ctx,
    writes,
    { apiVersion: "policy/v1", kind: "PodDisruptionBudget", name, namespace },
    live,
  );
}
