import type { GitLabCore } from "../../apis/gitlabcore.js";
import {
  GitLabConfigSourceLabel,
  GitLabCoreGroup,
  GitLabCoreKind,
  GitLabCoreManagers,
  GitLabCorePlural,
  GitLabCoreVersion,
  GitLabReleaseNameLabel,
  GitLabReleaseNamespaceLabel,
} from "../../apis/gitlabcore-names.js";
import { CONFIGMAP, SECRET } from "../../runtime/builtin-types.js";
import { Controller, generationChanged } from "../../runtime/controller.js";
import type { Informer } from "../../runtime/informer.js";
import type { Manager } from "../../runtime/manager.js";
import type { TargetDefinition } from "../../runtime/target.js";
import type { KubeObject, ResourceType } from "../../runtime/types.js";
import type { LiveObjects } from "./apply/live.js";
import { type GitLabTargetConfig, parseGitLabConfig } from "./config.js";
import { GitLabCoreReconciler, type ReleaseSource, type VersionPolicy } from "./reconciler.js";
import { HOOK_ANNOTATION } from "./render/manifests.js";
import { setupGitLabSecretsIfServed } from "./secrets/wiring.js";
import type { ValuesSourceLookup } from "./values/index.js";
import { defaultValues, defaultVersionPolicy, releaseSourceFromEnv } from "./wiring.js";

export const GITLABCORE: ResourceType = {
  group: GitLabCoreGroup,
  version: GitLabCoreVersion,
  kind: GitLabCoreKind,
  plural: GitLabCorePlural,
  namespaced: true,
};

export const CONTROLLER_NAME = GitLabCoreManagers.controller;

/** Test seams: another chart source, version policy or values (the defaults are the real ones). */
export interface GitLabTargetHooks {
  release?: (manager: Manager) => ReleaseSource;
  versions?: VersionPolicy;
  values?: (
    gl: GitLabCore,
    chartVersion: string,
    config: GitLabTargetConfig,
    lookup: ValuesSourceLookup,
  ) => unknown;
}

/** Only labelled ConfigMaps and Secrets are read (versionRef, valuesFrom): the informers select on it. */
export const CONFIG_SOURCE_SELECTOR = `${GitLabConfigSourceLabel}=true`;

/**
 * GitLabCores that read this ConfigMap (spec.version.versionRef or spec.chart.valuesFrom) or this
 * Secret (spec.chart.valuesFrom): a change to it reconciles them, a failed render included.
 */
export function keysNamingSource(
  gitlabs: readonly GitLabCore[],
  kind: "ConfigMap" | "Secret",
  o: KubeObject,
): string[] {
  const name = o.metadata.name;
  return gitlabs
    .filter(
      (g) =>
        (kind === "ConfigMap" && g.spec?.version?.versionRef?.name === name) ||
        (g.spec?.chart?.valuesFrom ?? []).some((r) => r.kind === kind && r.name === name),
    )
    .map((g) => `${g.metadata.namespace}/${g.metadata.name}`);
}

/** The keys of a ConfigMap's data, or a Secret's decoded; undefined for no object. */
function dataOf(kind: "ConfigMap" | "Secret", o: KubeObject | undefined): Record<string, string> | undefined {
  if (!o) return undefined;
  const data = ((o as { data?: Record<string, string> }).data ?? {}) as Record<string, string>;
  if (kind === "ConfigMap") return data;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) out[k] = Buffer.from(v, "base64").toString("utf8");
  return out;
}

/** How long a pass waits for a new informer of a release kind to list before going without it. */
const LIVE_SYNC_WAIT_MS = 30_000;

async function untilSynced(inf: Informer<KubeObject>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    inf.waitForSync(),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

/** The GitLabCore an object of a release belongs to, by the release labels the render stamps. */
export function releaseKeysOf(o: KubeObject): string[] {
  const name = o.metadata.labels?.[GitLabReleaseNameLabel];
  const namespace = o.metadata.labels?.[GitLabReleaseNamespaceLabel];
  return name && namespace ? [`${namespace}/${name}`] : [];
}

/** A hook (Helm's annotation): not one of the release's objects, whatever labels it carries. */
const isHook = (o: KubeObject): boolean => o.metadata.annotations?.[HOOK_ANNOTATION] !== undefined;

/**
 * Changes to the release's objects wake their release. For a hook only an update does: that is a
 * running hook Job's progress, which the pass waits for. Its creation and deletion are the pass's
 * own doing (a failed run deletes its hooks by policy), and waking on them would start the next run
 * at once, bypassing the failure backoff; a pass that deleted an earlier run's hook looks again on
 * its own (hooks/exec.ts).
 */
export function watchRelease(controller: Controller, inf: Informer<KubeObject>): void {
  controller.watchMapped(inf, releaseKeysOf, undefined, isHook);
}

export function gitlabTarget(hooks: GitLabTargetHooks = {}): TargetDefinition<GitLabTargetConfig> {
  return {
    name: "gitlab",
    parseConfig: parseGitLabConfig,
    async setup(manager: Manager, config: GitLabTargetConfig) {
      const informer = manager.informer<GitLabCore>(GITLABCORE);
      const configMaps = manager.informer<KubeObject>(CONFIGMAP, { labelSelector: CONFIG_SOURCE_SELECTOR });
      const secrets = manager.informer<KubeObject>(SECRET, { labelSelector: CONFIG_SOURCE_SELECTOR });
      // Loaded on the first review: the decision reads the CRD's schema, which `run` alone never loads.
      manager.admission.register(GitLabCoreGroup, GitLabCoreKind, async (request) =>
        (await import("./admission.js")).gitLabCoreVerdict(request, {
          chartsDir: process.env["HELM_CHARTS"]?.trim() || undefined,
          managerServiceAccount: config.serviceAccountName,
        }),
      );
      const valuesOf = hooks.values ?? defaultValues;
      // The release's objects, watched per kind as the renders name them: what a quiet pass compares
      // with, and an edit or deletion by hand reconciles its release at once.
      const watched = new Set<Informer<KubeObject>>();
      let controller: Controller | undefined;
      const live: LiveObjects = async (type) => {
        // A manager that stopped (or lost leadership) starts no informer it would not stop.
        if (!manager.isLeader) return undefined;
        const inf = manager.informer<KubeObject>(type, {
          labelSelector: GitLabReleaseNameLabel,
          keepManagedFields: true,
        });
        inf.start();
        if (!watched.has(inf) && controller) {
          watched.add(inf);
          watchRelease(controller, inf);
        }
        // A kind the operator may not list (RBAC) never syncs: the pass then reads and writes that
        // kind directly, so the refusal is reported as an apply failure instead of a silent wait.
        if (!inf.hasSynced) await untilSynced(inf, LIVE_SYNC_WAIT_MS);
        return inf.hasSynced ? inf : undefined;
      };
      const reconciler = new GitLabCoreReconciler({
        type: GITLABCORE,
        client: manager.client,
        informer,
        configMaps,
        events: manager.events,
        release: hooks.release ? hooks.release(manager) : releaseSourceFromEnv(manager),
        versions: hooks.versions ?? defaultVersionPolicy,
        values: (gl, v) =>
          valuesOf(gl, v, config, (kind, name) =>
            dataOf(kind, (kind === "Secret" ? secrets : configMaps).get(`${gl.metadata.namespace}/${name}`)),
          ),
        settings: {
          requeueMs: config.requeueMs,
          stepRequeueMs: config.stepRequeueMs,
          hookTimeoutMs: config.hookTimeoutMs,
          observeOnly: config.observeOnly,
        },
        live,
      });
      controller = new Controller({
        name: CONTROLLER_NAME,
        log: manager.log,
        concurrency: config.concurrency,
        reconcile: reconciler.reconcile,
      });
      // Status writes bump the resourceVersion, not the generation: they must not retrigger.
      controller.watchPrimary(informer, generationChanged);
      controller.watchMapped(configMaps, (cm) =>
        keysNamingSource(informer.list(cm.metadata.namespace), "ConfigMap", cm),
      );
      controller.watchMapped(secrets, (s) =>
        keysNamingSource(informer.list(s.metadata.namespace), "Secret", s),
      );
      manager.add(controller);
      // What the chart renders with shared-secrets.provider: controller, instead of its hook Job.
      await setupGitLabSecretsIfServed(manager, {
        concurrency: config.concurrency,
        observeOnly: config.observeOnly,
      });
    },
  };
}
