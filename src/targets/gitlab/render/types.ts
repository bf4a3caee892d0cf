/** The shapes the renderer hands the reconciler; plain data, so planning on them stays pure. */

export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [k: string]: unknown;
}

export interface RenderedHook {
  object: RenderedObject;
  /** `helm.sh/hook` events, e.g. pre-install, pre-upgrade. */
  events: string[];
  /** `helm.sh/hook-weight`; 0 when absent or not a whole number (as helm does). */
  weight: number;
  /** `helm.sh/hook-delete-policy`; helm's default `before-hook-creation` when absent. */
  deletePolicies: string[];
}

export interface ChartInfo {
  name: string;
  version: string;
  appVersion?: string;
  /** sha256 of the archive, or of a chart folder's files and paths: the render cache keys on it. */
  digest: string;
}

export interface RenderResult {
  /** Everything but hooks, in helm's install order; CRDs included so the caller can refuse them. */
  objects: RenderedObject[];
  /** Sorted as helm runs them: weight, then name, then install order of the kind (compareHooks). */
  hooks: RenderedHook[];
  chart: ChartInfo;
}

/** What a render knows about the cluster, from discovery. */
export interface Capabilities {
  /** e.g. v1.37.2 */
  kubeVersion: string;
  /** Served group-versions and `<group-version>/<Kind>` entries, as helm's .Capabilities.APIVersions holds them. */
  apiVersions: string[];
  /**
   * `<apiVersion>/<Kind>` of served kinds that are cluster-scoped. Used to leave those without a
   * namespace; kinds not listed fall back to a built-in list of well-known cluster-scoped kinds.
   */
  clusterScoped?: string[];
}

export interface RenderRequest {
  /** A chart folder, or a packaged chart (`.tgz`). */
  chartDir: string;
  releaseName: string;
  namespace: string;
  values: unknown;
  capabilities: Capabilities;
  signal?: AbortSignal;
}
