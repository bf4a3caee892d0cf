import type { GitLabCore, GitLabVersion } from "../../apis/gitlabcore.js";
import type { GitLabCoreReasonType } from "../../apis/gitlabcore-names.js";
import type { KubeClient } from "../../runtime/client.js";
import type { KindEvents } from "../../runtime/events.js";
import type { Informer } from "../../runtime/informer.js";
import type { KubeObject, ResourceType } from "../../runtime/types.js";
import type { LiveObjects } from "./apply/live.js";
import type { Rendered } from "./apply/rendered.js";

/*
 * What the gitlab reconciler is given: where charts come from, how versions are decided, its
 * settings. The pass's stages and the wiring both read these; none of them needs the reconciler.
 */

/** What the cluster serves, as Helm's --kube-version and --api-versions want it. */
export interface Capabilities {
  kubeVersion: string;
  apiVersions: string[];
}

/** Thrown by a release source to say which reason a failure reports (ChartPullFailed, RenderFailed). */
export interface ReasonedError extends Error {
  reason?: GitLabCoreReasonType;
}

/** Where charts come from and how they are rendered: the renderer's side, injected. */
export interface ReleaseSource {
  capabilities(signal?: AbortSignal): Promise<Capabilities>;
  /** Chart versions that can be rendered: the charts directory or the repository index. */
  versions(signal?: AbortSignal): Promise<string[]>;
  /** Renders one chart version; the same inputs are answered from the render cache. */
  render(
    req: {
      version: string;
      releaseName: string;
      namespace: string;
      values: unknown;
      capabilities: Capabilities;
    },
    signal?: AbortSignal,
  ): Promise<Rendered>;
}

export type Resolution = { version: string } | { error: string; reason: GitLabCoreReasonType };
export type UpgradePath = { steps: string[] } | { error: string; reason: GitLabCoreReasonType };

/** Version resolution, pure; injected so the reconciler does not depend on how it is decided. */
export interface VersionPolicy {
  resolve(input: {
    spec: GitLabVersion;
    available: string[];
    deployed?: string;
    versionRefValue?: string;
  }): Resolution;
  /** The chart versions to apply in turn from `from` to `to`, one minor at a time, ending with `to`. */
  path(from: string, to: string, available: string[]): UpgradePath;
}

export interface GitLabTargetSettings {
  /** Quiet resync after a successful pass (30 s). */
  requeueMs: number;
  /** While an upgrade steps through minors or waits for migrations. */
  stepRequeueMs: number;
  /** The longest one hook Job may run. */
  hookTimeoutMs: number;
  /** Decide everything, write nothing to the release; the Drifted condition says what would change. */
  observeOnly?: boolean;
}

export interface GitLabReconcilerDeps {
  type: ResourceType;
  client: KubeClient;
  informer: Informer<GitLabCore>;
  configMaps: Informer<KubeObject>;
  events: KindEvents<GitLabCoreReasonType>;
  release: ReleaseSource;
  versions: VersionPolicy;
  /** Effective chart values for a resource and the chart version about to be rendered. */
  values: (gl: GitLabCore, chartVersion: string) => unknown;
  settings: GitLabTargetSettings;
  /**
   * Informers of the release's objects (a quiet pass then compares against them and asks the API
   * nothing); without them each object is read and the inventory listed on every pass.
   */
  live?: LiveObjects;
  now?: () => Date;
}
