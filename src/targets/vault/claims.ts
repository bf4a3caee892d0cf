import type { Informer } from "../../runtime/informer.js";
import type { KubeObject } from "../../runtime/types.js";
import { type CompiledSeed, compileSeed } from "./compile.js";

/** Whether the allow-list lets an object of `namespace` seed its path (see scope.ts); default: yes. */
export type SeedAdmission = (namespace: string, seed: CompiledSeed) => boolean;

type Seed = KubeObject & { spec?: unknown };

/**
 * Which object a path belongs to when several objects this controller watches declare it. The
 * oldest (creationTimestamp, then uid) wins, so the outcome does not depend on which reconcile
 * runs first. Kept current from informer events in O(1) each; only a path declared more than once
 * costs anything to ask about.
 */
export class PathClaims {
  private readonly byPath = new Map<string, Set<string>>();
  private readonly pathOf = new Map<string, string>();

  constructor(
    private readonly informer: Informer<Seed>,
    private readonly admits: SeedAdmission = () => true,
  ) {
    informer.addHandler({
      add: (o) => this.track(o),
      update: (_, n) => this.track(n),
      delete: (o) => this.untrack(keyOf(o)),
    });
    for (const o of informer.list()) this.track(o);
  }

  /** The owner marker (`namespace/name`) of the object that wins `path`, when more than one declares it. */
  claimantOf(path: string): string | undefined {
    const keys = this.byPath.get(path);
    if (!keys || keys.size < 2) return undefined;
    let best: { key: string; created: number; uid: string } | undefined;
    for (const key of keys) {
      const o = this.informer.get(key);
      // Objects on their way out, whose spec cannot be seeded, or that the allow-list refuses claim
      // nothing: an application cannot keep a platform object off its own path by declaring it first.
      if (!o || o.metadata.deletionTimestamp) continue;
      const compiled = compileSeed(o.spec);
      if (!compiled.ok || !this.admits(o.metadata.namespace ?? "", compiled.seed)) continue;
      const created = Date.parse(o.metadata.creationTimestamp ?? "") || Number.MAX_SAFE_INTEGER;
      const uid = o.metadata.uid ?? "";
      if (!best || created < best.created || (created === best.created && uid < best.uid)) {
        best = { key, created, uid };
      }
    }
    return best?.key;
  }

  private track(o: Seed): void {
    const key = keyOf(o);
    const spec = o.spec as { path?: unknown } | undefined;
    const path = typeof spec?.path === "string" ? spec.path : undefined;
    if (this.pathOf.get(key) === path) return;
    this.untrack(key);
    if (path === undefined) return;
    this.pathOf.set(key, path);
    const keys = this.byPath.get(path) ?? new Set<string>();
    keys.add(key);
    this.byPath.set(path, keys);
  }

  private untrack(key: string): void {
    const path = this.pathOf.get(key);
    if (path === undefined) return;
    this.pathOf.delete(key);
    const keys = this.byPath.get(path);
    keys?.delete(key);
    if (keys?.size === 0) this.byPath.delete(path);
  }
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
