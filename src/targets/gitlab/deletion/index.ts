import type { KubeClient } from "../../../runtime/client.js";
import { errorMessage } from "../../../runtime/errors.js";
import type { Logger } from "../../../runtime/log.js";
import { describeObject } from "../apply/objects.js";
import { pruneRelease } from "../prune/index.js";

export interface CleanupReport {
  deleted: string[];
  failed: { object: string; error: string }[];
}

/**
 * What the finalizer does: namespaced objects carry a controller reference and go with the owner,
 * so only cluster-scoped objects of the recorded kinds that carry the release labels are listed and
 * deleted, one at a time (the operator may list and delete them but not deletecollection). Nothing
 * is rendered. A failure is logged and returned, never thrown: it must not block the deletion.
 */
export async function cleanUpRelease(
  client: KubeClient,
  release: { name: string; namespace: string },
  renderedKinds: readonly string[],
  log: Logger,
  signal?: AbortSignal,
): Promise<CleanupReport> {
  const report: CleanupReport = { deleted: [], failed: [] };
  try {
    const result = await pruneRelease(client, {
      release,
      kinds: renderedKinds,
      keep: new Set(),
      namespaces: [],
      order: "uninstall",
      signal,
    });
    for (const item of result.deleted)
      report.deleted.push(describeObject({ kind: item.type.kind, metadata: item.metadata }));
    for (const f of result.failed)
      report.failed.push({
        object: describeObject({ kind: f.item.type.kind, metadata: f.item.metadata }),
        error: f.error,
      });
  } catch (e) {
    if (signal?.aborted) throw e;
    report.failed.push({ object: "(listing the release's cluster-scoped objects)", error: errorMessage(e) });
  }
  for (const f of report.failed)
    log.warn({ object: f.object, err: f.error }, "cleanup of a release object failed; deletion goes on");
  if (report.deleted.length)
    log.info({ deleted: report.deleted }, "deleted the release's cluster-scoped objects");
  return report;
}
