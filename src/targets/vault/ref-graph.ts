import type { Informer } from "../../runtime/informer.js";
import type { KubeObject } from "../../runtime/types.js";
import type { SeedAdmission } from "./claims.js";
import { compileSeed } from "./compile.js";
import { analyseRefs, type RefAnalysis } from "./refs.js";

type Seed = KubeObject & { spec?: unknown };

/**
 * The reference graph between the paths of all cached VaultSeeds. Rebuilt lazily after the cache
 * changes, not on every reconcile: a resync pass over n objects then costs O(n), not O(n²).
 */
export class RefGraph {
  private analysis?: RefAnalysis;
  private dependents?: Map<string, Set<string>>;

  constructor(
    private readonly informer: Informer<Seed>,
    /** Objects the allow-list refuses are not in the graph: they neither copy nor form cycles. */
    private readonly admits: SeedAdmission = () => true,
  ) {
    const invalidate = () => {
      this.analysis = undefined;
      this.dependents = undefined;
    };
    informer.addHandler({
      add: invalidate,
      delete: invalidate,
      update: (o, n) => o.metadata.generation !== n.metadata.generation && invalidate(),
    });
  }

  private build(): void {
    const nodes: { path: string; dependsOn: string[] }[] = [];
    const dependents = new Map<string, Set<string>>();
    for (const o of this.informer.list()) {
      const c = compileSeed(o.spec);
      if (!c.ok || !this.admits(o.metadata.namespace ?? "", c.seed)) continue;
      const sources = [...new Set(c.seed.refs.map((r) => r.path))];
      nodes.push({ path: c.seed.path, dependsOn: sources });
      for (const s of sources) {
        const set = dependents.get(s) ?? new Set<string>();
        set.add(`${o.metadata.namespace}/${o.metadata.name}`);
        dependents.set(s, set);
      }
    }
    this.analysis = analyseRefs(nodes);
    this.dependents = dependents;
  }

  /** The paths of the cycle `path` is in, or undefined. */
  cycleOf(path: string): string[] | undefined {
    if (!this.analysis) this.build();
    return this.analysis!.cycleOf.get(path);
  }

  /** Whether some object copies from `path`. */
  isSource(path: string): boolean {
    if (!this.dependents) this.build();
    return this.dependents!.has(path);
  }

  /** Keys of the objects that copy from `path`: they are requeued after it is written. */
  dependentsOf(path: string): string[] {
    if (!this.dependents) this.build();
    return [...(this.dependents!.get(path) ?? [])];
  }
}
