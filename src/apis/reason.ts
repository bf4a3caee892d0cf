/**
 * Reasons as the type checker sees them. Each kind's reason table (`*-names.ts`) is built with
 * `reasonTable`, which leaves every value the plain string it was (users' alerts match on it) but
 * types it as `Reason<Kind, "Value">`. A place that asks for a kind's reason union therefore refuses
 * a string literal and a reason of another kind, and the runtime's condition and event helpers
 * refuse any string that comes from no table.
 *
 * The brand's property name is shared with `src/runtime/conditions.ts` (`KindReason`) by convention:
 * the runtime may not import the kinds, and a structural brand lets both sides agree without it.
 */
export type Reason<K extends string, V extends string = string> = V & { readonly __reasonOf: K };

/** Brands each value of `table` as a reason of kind `K`; the object returned is `table` itself. */
export function reasonTable<K extends string>() {
  return <const T extends Readonly<Record<string, string>>>(table: T) =>
    table as unknown as { readonly [P in keyof T]: Reason<K, T[P]> };
}
