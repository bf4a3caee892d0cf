import { applyAny } from "../../../runtime/apply.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { KubeObject } from "../../../runtime/types.js";
import { withOwner } from "../apply/exec.js";
import { describeObject, redactedError } from "../apply/objects.js";
import { FIELD_MANAGER } from "../apply/plan.js";
import type { RenderedObject } from "../apply/rendered.js";

export interface PreflightReport {
  /** "Kind namespace/name" of each object the server accepted. */
  accepted: string[];
  /** Objects the server refused, with its reason (a Secret's message is withheld). */
  refused: { object: string; error: string }[];
}

/**
 * Server-side applies each object with dryRun=All, as the real apply would (same field manager,
 * forced, with the controller reference): admission and validation run, nothing is stored. Every
 * object is tried, so one pass names every refusal.
 */
export async function dryRunPreflight(
  client: KubeClient,
  owner: KubeObject,
  objects: readonly RenderedObject[],
  signal?: AbortSignal,
): Promise<PreflightReport> {
  const report: PreflightReport = { accepted: [], refused: [] };
  for (const rendered of objects) {
    signal?.throwIfAborted();
    let intent: KubeObject = rendered as KubeObject;
    try {
      const type = await client.resources.find(rendered.apiVersion, rendered.kind);
      if (!type) {
        report.refused.push({
          object: describeObject(rendered),
          error: `kind ${rendered.apiVersion}/${rendered.kind} is not served by the cluster`,
        });
        continue;
      }
      intent = withOwner(owner, rendered, type);
      await applyAny(client, intent, { fieldManager: FIELD_MANAGER, force: true, dryRun: true });
      report.accepted.push(describeObject(intent));
    } catch (e) {
      if (signal?.aborted) throw e;
      report.refused.push({
        object: describeObject(intent),
        error: redactedError(intent, e),
      });
    }
  }
  return report;
}
