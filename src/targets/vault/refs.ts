// References between KV paths: parsing `<ref:mount/path#key.path>` targets, reading the value a
// reference stands for, and ordering VaultSeeds so a chain of references settles in one pass.

import { type DataTree, getAt, leafText, splitKeyPath } from "./tree.js";

export interface SeedPath {
  /** First segment: the KV v2 mount. A mount nested deeper than one segment is not supported. */
  mount: string;
  /** The rest: the secret's path inside the mount. */
  subPath: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export function parseSeedPath(path: string): Parsed<SeedPath> {
  if (path === "") return { ok: false, message: "path is empty; it needs <mount>/<path>" };
  if (/\s/.test(path)) return { ok: false, message: "path must not contain whitespace" };
  if (path.includes("#")) return { ok: false, message: "path must not contain #" };
  const segments = path.split("/");
  if (segments.length < 2) return { ok: false, message: "path needs <mount>/<path>" };
  if (segments.some((segment) => segment === "")) {
    return { ok: false, message: "path has an empty segment (leading, trailing or doubled /)" };
  }
  if (segments.some((segment) => segment === "." || segment === "..")) {
    return { ok: false, message: "path must not contain . or .. segments" };
  }
  return { ok: true, value: { mount: segments[0]!, subPath: segments.slice(1).join("/") } };
}

export interface RefTarget {
  /** Canonical `mount/path#key.path`: the key of the resolved-values map the planner reads. */
  id: string;
  path: string;
  key: string;
}

function checkKeyPath(key: string, what: string): string | undefined {
  if (key === "") return `${what} needs a key path`;
  if (splitKeyPath(key).some((segment) => segment === "")) return `${what} key path has an empty segment`;
  return undefined;
}

/** Parses the part of a ref template after `ref:`. */
export function parseRefTarget(body: string): Parsed<RefTarget> {
  const hash = body.indexOf("#");
  if (hash < 0) return { ok: false, message: "ref needs mount/path#key.path" };
  const path = body.slice(0, hash);
  const key = body.slice(hash + 1);
  const parsedPath = parseSeedPath(path);
  if (!parsedPath.ok) return { ok: false, message: `ref ${parsedPath.message}` };
  const keyProblem = checkKeyPath(key, "ref");
  if (keyProblem) return { ok: false, message: keyProblem };
  return { ok: true, value: { id: `${path}#${key}`, path, key } };
}

export function checkBcryptTarget(key: string): string | undefined {
  return checkKeyPath(key, "bcrypt");
}

/** The text a reference copies from its source path's data, or undefined when there is none. */
export function readRefValue(sourceData: DataTree | undefined, key: string): string | undefined {
  if (sourceData === undefined) return undefined;
  const found = getAt(sourceData, key);
  return found.found ? leafText(found.value) : undefined;
}

export interface RefNode {
  path: string;
  /** Paths this node copies from. Paths that no node declares are sources outside the graph. */
  dependsOn: Iterable<string>;
}

export interface RefAnalysis {
  /**
   * Every node path once. Sources come before the paths that copy them, so visiting in this order
   * lets a chain a ← b ← c settle in one pass; paths in or behind a cycle come last, sorted.
   */
  order: string[];
  /** Each cycle as the sorted list of its paths. */
  cycles: string[][];
  /** The cycle a path belongs to, for its RefCycle message. */
  cycleOf: Map<string, string[]>;
}

export function analyseRefs(nodes: Iterable<RefNode>): RefAnalysis {
  const edges = new Map<string, Set<string>>();
  for (const node of nodes) {
    const targets = edges.get(node.path) ?? new Set<string>();
    for (const target of node.dependsOn) targets.add(target);
    edges.set(node.path, targets);
  }
  for (const [path, targets] of edges) {
    edges.set(path, new Set([...targets].filter((target) => edges.has(target))));
  }
  const cycles = stronglyConnected(edges).filter(
    (component) => component.length > 1 || edges.get(component[0]!)!.has(component[0]!),
  );
  const cycleOf = new Map<string, string[]>();
  for (const cycle of cycles) for (const path of cycle) cycleOf.set(path, cycle);
  return { order: topologicalOrder(edges, cycleOf), cycles, cycleOf };
}

// Tarjan's algorithm, iterative so that a long chain of references cannot overflow the stack.
function stronglyConnected(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of [...edges.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { path: string; targets: string[]; next: number }[] = [];
    const enter = (path: string): void => {
      index.set(path, counter);
      low.set(path, counter);
      counter++;
      stack.push(path);
      onStack.add(path);
      work.push({ path, targets: [...edges.get(path)!].sort(), next: 0 });
    };
    enter(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.next < frame.targets.length) {
        const target = frame.targets[frame.next++]!;
        if (!index.has(target)) enter(target);
        else if (onStack.has(target)) low.set(frame.path, Math.min(low.get(frame.path)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.path, Math.min(low.get(parent.path)!, low.get(frame.path)!));
      if (low.get(frame.path) === index.get(frame.path)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.path);
        components.push(component.sort());
      }
    }
  }
  return components;
}

function topologicalOrder(edges: Map<string, Set<string>>, cyclic: Map<string, string[]>): string[] {
  const waitingOn = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const [path, targets] of edges) {
    waitingOn.set(path, targets.size);
    for (const target of targets) {
      const list = dependents.get(target) ?? [];
      list.push(path);
      dependents.set(target, list);
    }
  }
  // Level by level: each level holds the paths whose sources all came in earlier levels.
  let level = [...edges.keys()].filter((path) => waitingOn.get(path) === 0 && !cyclic.has(path)).sort();
  const order: string[] = [];
  while (level.length > 0) {
    const next: string[] = [];
    for (const path of level) {
      order.push(path);
      for (const dependent of dependents.get(path) ?? []) {
        const left = waitingOn.get(dependent)! - 1;
        waitingOn.set(dependent, left);
        if (left === 0 && !cyclic.has(dependent)) next.push(dependent);
      }
    }
    level = next.sort();
  }
  const placed = new Set(order);
  const rest = [...edges.keys()].filter((path) => !placed.has(path)).sort();
  return [...order, ...rest];
}
