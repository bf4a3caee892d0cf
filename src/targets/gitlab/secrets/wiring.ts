/**
 * The GitLabSecrets controller of the gitlab target. It watches the resources and, metadata only,
 * the Secrets of the watched namespaces: a declared Secret deleted or edited by hand reconciles the
 * resources that declare it, while no Secret value is kept in the operator's memory.
 */
import type { GitLabSecrets } from "../../../apis/gitlabsecrets.js";
import {
  GitLabSecretsGroup,
  GitLabSecretsKind,
  GitLabSecretsManagers,
  GitLabSecretsPlural,
  GitLabSecretsVersion,
} from "../../../apis/gitlabsecrets-names.js";
import { SECRET } from "../../../runtime/builtin-types.js";
import { Controller, done } from "../../../runtime/controller.js";
import type { Informer } from "../../../runtime/informer.js";
import type { Manager } from "../../../runtime/manager.js";
import type { KubeObject, ResourceType } from "../../../runtime/types.js";
import { GitLabSecretsReconciler } from "./reconciler.js";

export const GitLabSecretsApiVersion = `${GitLabSecretsGroup}/${GitLabSecretsVersion}`;

export const GITLABSECRETS: ResourceType = {
  group: GitLabSecretsGroup,
  version: GitLabSecretsVersion,
  kind: GitLabSecretsKind,
  plural: GitLabSecretsPlural,
  namespaced: true,
};

export const GITLABSECRETS_CONTROLLER_NAME = GitLabSecretsManagers.controller;

/** The resources of the Secret's namespace that declare it. */
export function keysDeclaring(all: readonly GitLabSecrets[], secret: KubeObject): string[] {
  return all
    .filter(
      (g) =>
        (g.spec?.secrets ?? []).some((s) => s.name === secret.metadata.name) ||
        (g.spec?.certificates ?? []).some((c) =>
          [c.tlsSecret, c.caSecret, c.chainSecret].includes(secret.metadata.name ?? ""),
        ),
    )
    .map((g) => `${g.metadata.namespace}/${g.metadata.name}`);
}

/**
 * Sets the controller up when the API server serves GitLabSecrets. Helm installs a chart's CRDs on
 * install only, so an operator upgraded in place may run before this CRD exists: an informer of an
 * unserved kind would never sync and would hold the whole gitlab target back. It is then left out,
 * with a warning, until the next start; a discovery failure counts as served.
 */
export async function setupGitLabSecretsIfServed(
  manager: Manager,
  opts: { concurrency: number; observeOnly?: boolean },
): Promise<Controller | undefined> {
  const served = await manager.client.resources
    .find(GitLabSecretsApiVersion, GitLabSecretsKind)
    .then((t) => t !== undefined)
    .catch(() => true);
  if (!served) {
    manager.log.warn(
      { kind: GitLabSecretsKind, crd: `${GitLabSecretsPlural}.${GitLabSecretsGroup}` },
      "GitLabSecrets is not served (its CRD is not installed): not reconciled until the operator restarts with it",
    );
    return undefined;
  }
  return setupGitLabSecrets(manager, opts);
}

export function setupGitLabSecrets(
  manager: Manager,
  opts: { concurrency: number; observeOnly?: boolean },
): Controller {
  const informer = manager.informer<GitLabSecrets>(GITLABSECRETS);
  const secrets: Informer<KubeObject> = manager.informer<KubeObject>(SECRET, { metadataOnly: true });
  const reconciler = new GitLabSecretsReconciler({
    client: manager.client,
    type: GITLABSECRETS,
    cache: informer,
    events: manager.events,
    observeOnly: opts.observeOnly,
  });
  const controller = new Controller({
    name: GITLABSECRETS_CONTROLLER_NAME,
    log: manager.log,
    concurrency: opts.concurrency,
    reconcile: async (key, ctx) => {
      const gs = informer.get(key);
      if (!gs) {
        reconciler.forget(key);
        return done();
      }
      return reconciler.reconcile(gs, ctx.signal);
    },
  });
  // Status writes change the resourceVersion only; labels (carried onto the Secrets) and spec count.
  controller.watchPrimary(
    informer,
    (o, n) =>
      o?.metadata.generation !== n.metadata.generation ||
      JSON.stringify(o?.metadata.labels ?? {}) !== JSON.stringify(n.metadata.labels ?? {}),
  );
  controller.watchMapped(
    secrets,
    (s) => keysDeclaring(informer.list(s.metadata.namespace), s),
    (o, n) => o?.metadata.resourceVersion !== n.metadata.resourceVersion,
  );
  manager.add(controller);
  return controller;
}
