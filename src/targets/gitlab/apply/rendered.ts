/**
 * The shape of a render as the reconciler consumes it: the renderer's own types (plain data), so the
 * executors here can be planned and tested with hand-written renders.
 */
import type { ChartInfo, RenderResult } from "../render/types.js";

export type { RenderedHook, RenderedObject } from "../render/types.js";
export type RenderedChart = ChartInfo;
export type Rendered = RenderResult;

/** `<apiVersion>/<Kind>`, the form status.renderedKinds records. */
export const kindKey = (o: { apiVersion: string; kind: string }): string => `${o.apiVersion}/${o.kind}`;

/** Splits a recorded `<apiVersion>/<Kind>` back; undefined for an entry that cannot be one. */
export function parseKindKey(key: string): { apiVersion: string; kind: string } | undefined {
  const i = key.lastIndexOf("/");
  if (i <= 0 || i === key.length - 1) return undefined;
  return { apiVersion: key.slice(0, i), kind: key.slice(i + 1) };
}
