import { fail, proceed } from "../../../runtime/stages.js";
import { pruned } from "../metrics.js";
import { prunable, pruneRelease } from "../prune/index.js";
import type { UpgradeBlock } from "../status/plan.js";
import { gitlabVersionOf } from "../status/version.js";
import { workloadReadiness } from "../status/workloads.js";
import { versionSpecOf } from "../version/index.js";
import type { Applied, Chosen, GitLabStage, HooksDone, PassBase, RenderedStep, Reported } from "./context.js";

/**
 * What the render no longer produces is deleted, never in the middle of an upgrade; observe-only
 * lists it instead. Ends every pass that got this far with what it did.
 */
export async function pruneAndReport(p: Reporting): Promise<GitLabStage<Reported>> {
  const reported = await (p.observe ? observed(p) : applied(p));
  // A held upgrade whose version follows the repository and could not be resolved is a failure
  // (see below): the status still reports what this pass applied.
  if (unresolved(p) && p.blocked)
    return fail(p.blocked.reason, p.blocked.message, {
      message: p.blocked.message,
      detail: reported.outcome,
    });
  return proceed(reported);
}

/** What the last stage reads: everything the earlier ones found. */
type Reporting = PassBase &
  Chosen &
  RenderedStep &
  HooksDone &
  Applied & { notice?: UpgradeBlock | undefined };

async function observed(p: Reporting): Promise<Reported> {
  const would = p.upgradePass
    ? []
    : await prunable(p.deps.client, {
        live: p.deps.live,
        release: p.release,
        kinds: p.recorded,
        keep: p.report.keep,
        namespaces: [p.release.namespace],
      });
  return {
    outcome: {
      kind: "observed",
      targetVersion: p.target,
      blocked: p.blocked,
      notice: p.notice,
      chartVersion: p.step,
      wouldHook: p.wouldHook,
      wouldApply: p.report.wouldApply,
      wouldPrune: would.map(
        (i) => `${i.type.kind} ${i.metadata.namespace ? `${i.metadata.namespace}/` : ""}${i.metadata.name}`,
      ),
    },
    next: "resync",
  };
}

/**
 * A held upgrade is looked at again with the resync; one whose version follows the repository and
 * could not be resolved is a failure the runtime retries with its backoff (and counts), as a failed
 * resolution is, so the index is not asked every resync. Objects deleted or edited by hand wake
 * the pass anyway.
 */
function unresolved(p: Reporting): boolean {
  return p.blocked !== undefined && p.target === undefined && versionSpecOf(p.obj.spec).type !== "Static";
}

async function applied(p: Reporting): Promise<Reported> {
  if (!p.upgradePass) {
    const result = await pruneRelease(p.deps.client, {
      live: p.deps.live,
      release: p.release,
      kinds: p.recorded,
      keep: p.report.keep,
      namespaces: [p.release.namespace],
      signal: p.signal,
    });
    pruned.inc(result.deleted.length);
    if (result.deleted.length)
      p.log.info({ pruned: result.deleted.map((i) => `${i.type.kind} ${i.metadata.name}`) }, "pruned");
    for (const f of result.failed) p.log.warn({ object: f.item.metadata.name, err: f.error }, "prune failed");
  }
  const stepping = !p.blocked && p.step !== p.target;
  return {
    outcome: {
      kind: "applied",
      targetVersion: p.target,
      blocked: p.blocked,
      notice: p.notice,
      chartVersion: p.step,
      gitlabVersion: gitlabVersionOf(p.render),
      hooksRan: p.hooksRan,
      renderedKinds: p.report.servedKinds,
      workloads: workloadReadiness(p.report.live),
      stepping,
      migrations: p.migrations,
      migrationsRetry: p.migrationsRetry,
      clickHouseEnabled: p.clickHouseEnabled,
    },
    next: stepping || p.migrations === "running" || p.migrations === "retrying" ? "step" : "resync",
  };
}
