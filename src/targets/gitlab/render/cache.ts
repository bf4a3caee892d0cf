import { createHash } from "node:crypto";
import { canonicalJson } from "../../../runtime/canonical-json.js";
import type { Capabilities, RenderResult } from "./types.js";

export interface RenderKeyInput {
  chartDigest: string;
  releaseName: string;
  namespace: string;
  values: unknown;
  capabilities: Capabilities;
}

/**
 * Everything a render depends on, hashed: the chart's bytes, release name and namespace (templates
 * read them), the effective values and the capabilities. Values hold secrets at times, so only the
 * hash is kept.
 */
export function renderKey(input: RenderKeyInput): string {
  const caps = {
    kubeVersion: input.capabilities.kubeVersion,
    apiVersions: [...input.capabilities.apiVersions].sort(),
    clusterScoped: [...(input.capabilities.clusterScoped ?? [])].sort(),
  };
  return createHash("sha256")
    .update(
      canonicalJson(
        {
          chart: input.chartDigest,
          release: input.releaseName,
          namespace: input.namespace,
          values: input.values ?? {},
          capabilities: caps,
        },
        { loose: true },
      ),
    )
    .digest("hex");
}

/**
 * The last renders by key, least recently used dropped first. Pure: no I/O, no clock. Results are
 * stored and handed out as copies, so a caller that edits a result cannot change the cache.
 */
export class RenderCache {
  private readonly entries = new Map<string, RenderResult>();

  constructor(readonly capacity = 64) {
    if (!(Number.isInteger(capacity) && capacity > 0))
      throw new Error("RenderCache capacity must be at least 1");
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): RenderResult | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return structuredClone(hit);
  }

  set(key: string, result: RenderResult): void {
    this.entries.delete(key);
    this.entries.set(key, structuredClone(result));
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
