// fast-check arbitraries for VaultSeed data trees whose key names are as hostile as a user can make
// them: JavaScript's own property names, empty-looking and unicode names. Leaves are literals
// (strings that are not templates), numbers and booleans, so the stored tree must equal the
// declared one exactly.
import fc from "fast-check";

export const BUILTIN_NAMES = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "isPrototypeOf",
  "__defineGetter__",
  "__lookupGetter__",
  "length",
  "then",
  "toJSON",
];

/** A key name a VaultSeed accepts: anything but "" and a dot. */
export const keyName: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 3, arbitrary: fc.constantFrom(...BUILTIN_NAMES) },
    { weight: 1, arbitrary: fc.constantFrom(" ", "\u200b", "\u00a0", "ünï😀", "0", "-1", "a b", "$", "\\") },
    { weight: 3, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }) },
  )
  .filter((name) => name !== "" && !name.includes("."));

/** A leaf that is stored as given: a non-template string, a finite number or a boolean. */
export const plainLeaf: fc.Arbitrary<string | number | boolean> = fc.oneof(
  fc.string({ maxLength: 12 }).filter((s) => !s.startsWith("<")),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
  fc.boolean(),
);

export type Tree = { [key: string]: Tree | string | number | boolean };

/**
 * Trees built with Object.defineProperty on null-prototype objects, so that `__proto__` is an own
 * key exactly as JSON.parse produces it. At most `maxKeys` keys per level, `maxDepth` levels.
 */
export function hostileTree(maxDepth = 3, maxKeys = 5): fc.Arbitrary<Tree> {
  const { tree } = fc.letrec<{ tree: Tree; node: Tree | string | number | boolean }>((tie) => ({
    tree: fc
      .uniqueArray(fc.tuple(keyName, tie("node")), {
        minLength: 1,
        maxLength: maxKeys,
        selector: ([k]) => k,
        depthIdentifier: "tree",
      })
      .map(toObject),
    node: fc.oneof({ depthSize: "small", maxDepth, depthIdentifier: "tree" }, plainLeaf, tie("tree")),
  }));
  return tree;
}

function toObject(entries: [string, Tree | string | number | boolean][]): Tree {
  const o = Object.create(null) as Tree;
  for (const [k, v] of entries)
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

/** Canonical JSON with sorted keys, blind to prototypes: equal trees give equal text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The names Object.prototype carries now; compare before and after to detect pollution. */
export function prototypeNames(): string[] {
  return Object.getOwnPropertyNames(Object.prototype).sort();
}
