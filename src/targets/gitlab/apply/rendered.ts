/**
 * The shape of a render as the reconciler consumes it. It mirrors the renderer's RenderResult
 * (render/index.ts) structurally, so the executors here can be planned and tested with hand-written
 * renders and never depend on how a chart was turned into objects.
 */
export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface RenderedHook {
  object: RenderedObject;
  /** helm.sh/hook events, e.g. pre-install, pre-upgrade. */
  events: string[];
  /** helm.sh/hook-weight; lower runs first. */
  weight: number;
  /** helm.sh/hook-delete-policy: before-hook-creation, hook-succeeded, hook-failed. */
  deletePolicies: string[];
}

export interface RenderedChart {
  name: string;
  version: string;
  appVersion?: string;
  digest: string;
}

export interface Rendered {
  objects: RenderedObject[];
  hooks: RenderedHook[];
  chart: RenderedChart;
}

/** `<apiVersion>/<Kind>`, the form status.renderedKinds records. */
export const kindKey = (o: { apiVersion: string; kind: string }): string => `${o.apiVersion}/${o.kind}`;

/** Splits a recorded `<apiVersion>/<Kind>` back; undefined for an entry that cannot be one. */
export function parseKindKey(key: string): { apiVersion: string; kind: string } | undefined {
  const i = key.lastIndexOf("/");
  if (i <= 0 || i === key.length - 1) return undefined;
  return { apiVersion: key.slice(0, i), kind: key.slice(i + 1) };
}
