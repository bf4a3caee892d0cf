// A VaultSeed's data is a tree whose leaves are plain values (strings, numbers, booleans); the KV
// path stores the same tree as nested JSON objects. Declarations are addressed by dotted key paths
// (`admin.password`), which is only unambiguous because a declared key name may not contain a dot.
// Stored data may hold anything a person wrote (lists, dotted names), so the accessors below walk
// segment by segment and never reinterpret keys they were not asked about.
//
// Key names are user data, and any name is allowed: `__proto__`, `constructor`, `toString`. So the
// trees built here have no prototype, every write defines an own property (assignment to
// `__proto__` would set a prototype instead) and every read checks that the key is the node's own.

export type DataTree = { [key: string]: unknown };

/** A leaf a VaultSeed may declare: a template or literal string, or a number or boolean kept as given. */
export type Leaf = string | number | boolean;

export interface TreeProblem {
  key: string;
  message: string;
}

export interface FlatDeclarations {
  /** Leaves by dotted key path, in the order the tree lists them. */
  leaves: Map<string, Leaf>;
  problems: TreeProblem[];
}

/** Deeper trees are refused before any recursion could exhaust the stack. */
export const MAX_TREE_DEPTH = 64;

/** The longest dotted key path status.managedKeys can list (its schema's maxLength). */
export const MAX_KEY_PATH_LENGTH = 1024;

/** A map with no prototype: no inherited name can be mistaken for a key. */
export function emptyTree(): DataTree {
  return Object.create(null) as DataTree;
}

/** Defines `name` as an own, plain data property, whatever the name. */
export function setOwn(node: DataTree, name: string, value: unknown): void {
  Object.defineProperty(node, name, { value, enumerable: true, writable: true, configurable: true });
}

/** The node's own value under `name`; never one inherited from a prototype. */
export function ownValue(node: DataTree, name: string): unknown {
  return Object.hasOwn(node, name) ? node[name] : undefined;
}

export function isPlainObject(value: unknown): value is DataTree {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function splitKeyPath(key: string): string[] {
  return key.split(".");
}

export function joinKeyPath(parent: string, name: string): string {
  return parent === "" ? name : `${parent}.${name}`;
}

function describeType(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  return `a ${typeof value}`;
}

export function flattenTree(data: unknown): FlatDeclarations {
  const leaves = new Map<string, Leaf>();
  const problems: TreeProblem[] = [];
  if (!isPlainObject(data)) {
    problems.push({ key: "", message: `data must be a map of keys, found ${describeType(data)}` });
    return { leaves, problems };
  }
  const walk = (node: DataTree, parent: string, depth: number): void => {
    if (depth > MAX_TREE_DEPTH) {
      problems.push({
        key: parent,
        message: `data is nested deeper than ${MAX_TREE_DEPTH} levels at ${parent}`,
      });
      return;
    }
    for (const [name, value] of Object.entries(node)) {
      const key = joinKeyPath(parent, name);
      if (name === "") {
        problems.push({ key, message: `a key name under ${parent || "data"} is empty` });
        continue;
      }
      if (name.includes(".")) {
        problems.push({ key, message: `key name "${name}" contains a dot; nest it as a map instead` });
        continue;
      }
      if (key.length > MAX_KEY_PATH_LENGTH) {
        problems.push({
          key: key.slice(0, 64),
          message: `a key path under ${parent || "data"} is longer than ${MAX_KEY_PATH_LENGTH} characters, which status.managedKeys cannot hold`,
        });
        continue;
      }
      if (isPlainObject(value)) {
        walk(value, key, depth + 1);
      } else if (typeof value === "string" || typeof value === "boolean") {
        leaves.set(key, value);
      } else if (typeof value === "number" && Number.isFinite(value)) {
        leaves.set(key, value);
      } else if (value === null || value === undefined) {
        problems.push({ key, message: `${key} has no value; write "" for a key filled in by hand` });
      } else {
        problems.push({
          key,
          message: `${key} must be a string, a number, a boolean or a map, found ${describeType(value)}`,
        });
      }
    }
  };
  walk(data, "", 1);
  return { leaves, problems };
}

/** Builds the nested tree back from dotted leaves; throws when one key is both a leaf and a map. */
export function unflattenTree(leaves: Iterable<readonly [string, unknown]>): DataTree {
  const tree = emptyTree();
  for (const [key, value] of leaves) {
    if (!setAt(tree, key, value)) {
      throw new Error(`key ${key} collides with another key that is both a value and a map`);
    }
  }
  return tree;
}

export interface Lookup {
  found: boolean;
  value: unknown;
}

export function getAt(tree: DataTree, key: string): Lookup {
  let node: unknown = tree;
  for (const segment of splitKeyPath(key)) {
    if (!isPlainObject(node) || !Object.hasOwn(node, segment)) return { found: false, value: undefined };
    node = ownValue(node, segment);
  }
  return { found: true, value: node };
}

/**
 * Writes a leaf, creating the maps on the way. Returns false, leaving the tree untouched, when a
 * non-map value sits where a map is needed: replacing it would destroy a value somebody wrote.
 */
export function setAt(tree: DataTree, key: string, value: unknown): boolean {
  if (!canSetAt(tree, key)) return false;
  const segments = splitKeyPath(key);
  let node: DataTree = tree;
  for (const segment of segments.slice(0, -1)) {
    const next = ownValue(node, segment);
    if (isPlainObject(next)) {
      node = next;
    } else {
      const child = emptyTree();
      setOwn(node, segment, child);
      node = child;
    }
  }
  setOwn(node, segments[segments.length - 1]!, value);
  return true;
}

/** Whether setAt would succeed, without changing anything. */
export function canSetAt(tree: DataTree, key: string): boolean {
  let node: unknown = tree;
  for (const segment of splitKeyPath(key).slice(0, -1)) {
    if (!isPlainObject(node)) return false;
    node = ownValue(node, segment);
    if (node === undefined) return true;
  }
  return isPlainObject(node);
}

/** Removes a key and any map it leaves empty, so a pruned subtree does not linger as `{}`. */
export function deleteAt(tree: DataTree, key: string): boolean {
  const segments = splitKeyPath(key);
  const parents: DataTree[] = [];
  let node: DataTree = tree;
  for (const segment of segments.slice(0, -1)) {
    const next = ownValue(node, segment);
    if (!isPlainObject(next)) return false;
    parents.push(node);
    node = next;
  }
  const last = segments[segments.length - 1]!;
  if (!Object.hasOwn(node, last)) return false;
  delete node[last];
  for (let depth = parents.length - 1; depth >= 0; depth--) {
    const parent = parents[depth]!;
    const name = segments[depth]!;
    const child = ownValue(parent, name);
    if (!isPlainObject(child) || Object.keys(child).length > 0) break;
    delete parent[name];
  }
  return true;
}

/** A deep copy made of prototype-less maps; lists and scalars are copied as they are. */
export function cloneTree(tree: DataTree): DataTree {
  return cloneValue(tree) as DataTree;
}

function cloneValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneValue);
  if (!isPlainObject(value)) return value;
  const copy = emptyTree();
  for (const name of Object.keys(value)) setOwn(copy, name, cloneValue(value[name]));
  return copy;
}

/** The text a stored leaf stands for; maps, lists and null have none. */
export function leafText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}
