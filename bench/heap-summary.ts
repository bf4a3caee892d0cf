/**
 * Attributes an operator heap snapshot (`npm run heap:summary FILE [N]`): the retained size of the
 * informer caches, the work queue and controller, the vault target's per-key state, the metrics
 * registry and the logger, each as "what would be freed if this were gone" (total reachable size minus
 * what stays reachable with it blocked), and per object when N, the number of objects, is given.
 */
import { readFileSync } from "node:fs";

interface Snapshot {
  snapshot: {
    meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const [file, countArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: heap-summary FILE.heapsnapshot [objects]\n");
  process.exit(2);
}
const objects = countArg ? Number(countArg) : 0;
const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
const { meta } = snap.snapshot;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const nType = meta.node_fields.indexOf("type");
const nName = meta.node_fields.indexOf("name");
const nSize = meta.node_fields.indexOf("self_size");
const nEdges = meta.node_fields.indexOf("edge_count");
const eType = meta.edge_fields.indexOf("type");
const eName = meta.edge_fields.indexOf("name_or_index");
const eTo = meta.edge_fields.indexOf("to_node");
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const WEAK = edgeTypes.indexOf("weak");
const nodeCount = snap.nodes.length / NF;

const firstEdge = new Uint32Array(nodeCount + 1);
for (let i = 0, e = 0; i < nodeCount; i++) {
  firstEdge[i] = e;
  e += snap.nodes[i * NF + nEdges]! * EF;
}
firstEdge[nodeCount] = snap.edges.length;

const nameOf = (i: number) => snap.strings[snap.nodes[i * NF + nName]!]!;
const typeOf = (i: number) => nodeTypes[snap.nodes[i * NF + nType]!]!;
const sizeOf = (i: number) => snap.nodes[i * NF + nSize]!;
const edgeName = (e: number) => {
  const t = edgeTypes[snap.edges[e + eType]!];
  const v = snap.edges[e + eName]!;
  return t === "element" || t === "hidden" ? String(v) : snap.strings[v]!;
};

/** Total self size reachable from the root, not passing through `blocked` nodes or weak edges. */
function reachable(blocked: Uint8Array | undefined): number {
  const seen = new Uint8Array(nodeCount);
  const stack = [0];
  seen[0] = 1;
  let total = 0;
  while (stack.length > 0) {
    const i = stack.pop()!;
    total += sizeOf(i);
    for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += EF) {
      if (snap.edges[e + eType] === WEAK) continue;
      const to = snap.edges[e + eTo]! / NF;
      if (seen[to] || blocked?.[to]) continue;
      seen[to] = 1;
      stack.push(to);
    }
  }
  return total;
}

type Matcher = (i: number) => boolean;
const instancesOf =
  (...names: string[]): Matcher =>
  (i) =>
    typeOf(i) === "object" && names.includes(nameOf(i));

/** The values held under property `prop` of instances of `owner` (e.g. Informer.store). */
function propertyOf(owner: string, prop: string): Matcher {
  const targets = new Set<number>();
  for (let i = 0; i < nodeCount; i++) {
    if (typeOf(i) !== "object" || nameOf(i) !== owner) continue;
    for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += EF)
      if (edgeName(e) === prop) targets.add(snap.edges[e + eTo]! / NF);
  }
  return (i) => targets.has(i);
}

const categories: [string, Matcher][] = [
  ["informer cache: objects (Informer.store)", propertyOf("Informer", "store")],
  ["informer cache: owner index", propertyOf("Informer", "ownerIndex")],
  ["work queue + controller (per-key queue state)", instancesOf("WorkQueue", "Controller")],
  [
    "vault target per-key state (reconciler, read cache, ref graph, bcrypt memory)",
    instancesOf("VaultSeedReconciler", "ReadCache", "RefGraph", "MatchMemory"),
  ],
  [
    "metrics (prom-client registry and metrics)",
    instancesOf("Registry", "Counter", "Gauge", "Histogram", "Summary"),
  ],
  ["logger (pino instances)", (i) => typeOf(i) === "object" && nameOf(i) === "Pino"],
  ["event recorder", instancesOf("EventRecorder")],
  ["timers (one per delayed requeue: Timeout, TimersList)", instancesOf("Timeout", "TimersList")],
  ["HTTP agents and sockets", instancesOf("Agent", "TLSSocket", "Socket")],
];

const total = reachable(undefined);
const mib = (b: number) => `${(b / 1048576).toFixed(2)} MiB`;
process.stdout.write(`${file}: ${nodeCount} nodes, ${mib(total)} reachable\n`);
for (const [label, match] of categories) {
  const blocked = new Uint8Array(nodeCount);
  let count = 0;
  for (let i = 0; i < nodeCount; i++)
    if (match(i)) {
      blocked[i] = 1;
      count++;
    }
  if (count === 0) {
    process.stdout.write(`  ${label}: not found\n`);
    continue;
  }
  const retained = total - reachable(blocked);
  const each = objects > 0 ? `, ${(retained / objects).toFixed(0)} B per object` : "";
  process.stdout.write(`  ${label}: ${mib(retained)} retained (${count} roots)${each}\n`);
}

// The largest self sizes by constructor, for whatever the categories above do not name.
const bySelf = new Map<string, { size: number; count: number }>();
for (let i = 0; i < nodeCount; i++) {
  const key = `${typeOf(i)}:${typeOf(i) === "object" || typeOf(i) === "closure" ? nameOf(i) : ""}`;
  const entry = bySelf.get(key) ?? { size: 0, count: 0 };
  entry.size += sizeOf(i);
  entry.count++;
  bySelf.set(key, entry);
}
process.stdout.write("  largest self sizes by type:constructor\n");
for (const [key, v] of [...bySelf].sort((a, b) => b[1].size - a[1].size).slice(0, 15))
  process.stdout.write(`    ${key.padEnd(40)} ${mib(v.size).padStart(11)}  ${v.count}\n`);
