/**
 * Checks and defaults an object against a kind's TypeBox schema, the way the API server would for
 * everything but CEL rules. Used by tests, by `validate` commands that run without a cluster, and by
 * controllers that want the defaulted view of an object read from a file.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

export interface FieldError {
  /** Dotted path such as `spec.rotate.keys[0]`; empty for the root. */
  path: string;
  message: string;
}

/** `/spec/rotate/keys/0` → `spec.rotate.keys[0]`, which reads like the field paths in kubectl errors. */
export function fieldPath(pointer: string): string {
  let out = "";
  for (const raw of pointer.split("/").slice(1)) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    out += /^\d+$/.test(part) ? `[${part}]` : out === "" ? part : `.${part}`;
  }
  return out;
}

// TypeBox reports a missed enum as "Expected union value"; naming the allowed values helps more.
function enumMessage(schema: TSchema): string | undefined {
  const members = (schema as { anyOf?: { const?: unknown }[] }).anyOf;
  if (!members?.length || !members.every((m) => m.const !== undefined)) return undefined;
  return `must be one of: ${members.map((m) => String(m.const)).join(", ")}`;
}

/** Every problem with `value`, one per field, in schema order; empty when it conforms. */
export function schemaErrors(schema: TSchema, value: unknown): FieldError[] {
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const e of Value.Errors(schema, value)) {
    const path = fieldPath(e.path);
    // A failed union reports once per member and once for itself; the first says enough.
    if (seen.has(path)) continue;
    seen.add(path);
    errors.push({ path, message: enumMessage(e.schema) ?? e.message });
  }
  return errors;
}

/** A copy of `value` with the schema's defaults filled in, as the API server would store it. */
export function withDefaults<T extends TSchema>(schema: T, value: unknown): Static<T> {
  return Value.Default(schema, structuredClone(value)) as Static<T>;
}
