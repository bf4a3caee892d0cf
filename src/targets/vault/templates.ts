// A leaf of a VaultSeed's data is either a literal (written once, then left to people) or a
// template the controller computes. Anything shaped like a template that does not parse is an
// error rather than a literal, so a typo never ends up stored in Vault as the text "<randon:24>".

import { checkBcryptTarget, parseRefTarget, type RefTarget } from "./refs.js";

export const MAX_GENERATED_LENGTH = 4096;

/** bcrypt reads at most this many bytes of its input; anything after them is silently ignored. */
export const BCRYPT_MAX_INPUT_BYTES = 72;

/**
 * The longest value a template can produce, in bytes, when that is known before it is generated;
 * undefined for references and hand-filled placeholders, whose values are only known at run time.
 */
export function maxValueBytes(template: Template): number | undefined {
  switch (template.kind) {
    case "literal":
      return template.value === "" ? undefined : Buffer.byteLength(String(template.value));
    case "random":
    case "hex":
      return template.length;
    case "uuid":
      return 36;
    case "age-secret":
      return 74; // AGE-SECRET-KEY-1 and 58 Bech32 characters
    case "age-public":
      return 62; // age1 and 58 Bech32 characters
    default:
      return undefined;
  }
}

export type Template =
  /** Written once as given: a string that is not a template, a number or a boolean. */
  | { kind: "literal"; value: string | number | boolean }
  | { kind: "random"; length: number }
  | { kind: "hex"; length: number }
  | { kind: "uuid" }
  | { kind: "age-secret" }
  | { kind: "age-public" }
  /** A value from OpenBao's password policy of that name, asked for when the key is generated. */
  | { kind: "policy"; name: string }
  | { kind: "bcrypt"; target: string }
  | { kind: "ref"; ref: RefTarget };

export type TemplateKind = Template["kind"];

export type ParsedLeaf = { ok: true; template: Template } | { ok: false; message: string };

const TEMPLATE_FORMS =
  "<random:N>, <hex:N>, <uuid>, <policy:NAME>, <age:secret>, <age:public>, <bcrypt:key.path>, <ref:mount/path#key.path>";

/** Kinds that draw fresh randomness, which are the only ones a rotation can regenerate. */
export function isGenerated(template: Template): boolean {
  switch (template.kind) {
    case "random":
    case "hex":
    case "uuid":
    case "policy":
    case "age-secret":
    case "age-public":
      return true;
    default:
      return false;
  }
}

/** A name that fits one URL segment of sys/policies/password/<name>/generate as it is. */
const POLICY_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

function looksLikeTemplate(text: string): boolean {
  return /^<[A-Za-z]/.test(text) && text.endsWith(">");
}

function parseLength(argument: string | undefined, name: string): number | string {
  if (argument === undefined || argument === "") return `${name} needs a length: <${name}:N>`;
  if (!/^[0-9]+$/.test(argument)) return `${name} length must be a whole number`;
  return Number(argument);
}

function fail(message: string): ParsedLeaf {
  return { ok: false, message };
}

function ok(template: Template): ParsedLeaf {
  return { ok: true, template };
}

export function parseLeaf(text: string): ParsedLeaf {
  if (!looksLikeTemplate(text)) return ok({ kind: "literal", value: text });
  const inner = text.slice(1, -1);
  const colon = inner.indexOf(":");
  const name = colon < 0 ? inner : inner.slice(0, colon);
  const argument = colon < 0 ? undefined : inner.slice(colon + 1);
  switch (name) {
    case "random": {
      const length = parseLength(argument, "random");
      if (typeof length === "string") return fail(length);
      if (length < 1 || length > MAX_GENERATED_LENGTH) {
        return fail(`random length must be between 1 and ${MAX_GENERATED_LENGTH}`);
      }
      return ok({ kind: "random", length });
    }
    case "hex": {
      const length = parseLength(argument, "hex");
      if (typeof length === "string") return fail(length);
      if (length < 2 || length > MAX_GENERATED_LENGTH || length % 2 !== 0) {
        return fail(`hex length must be an even number between 2 and ${MAX_GENERATED_LENGTH}`);
      }
      return ok({ kind: "hex", length });
    }
    case "uuid":
      return argument === undefined ? ok({ kind: "uuid" }) : fail("uuid takes no argument: <uuid>");
    case "policy": {
      if (argument === undefined || argument === "")
        return fail("policy needs the name of an OpenBao password policy: <policy:NAME>");
      if (!POLICY_NAME.test(argument))
        return fail(
          "policy name may hold only letters, digits, _, . and - (at most 128), as OpenBao names it",
        );
      return ok({ kind: "policy", name: argument });
    }
    case "age":
      if (argument === "secret") return ok({ kind: "age-secret" });
      if (argument === "public") return ok({ kind: "age-public" });
      return fail("age must be <age:secret> or <age:public>");
    case "bcrypt": {
      if (argument === undefined) return fail("bcrypt needs the key it hashes: <bcrypt:key.path>");
      const problem = checkBcryptTarget(argument);
      return problem ? fail(problem) : ok({ kind: "bcrypt", target: argument });
    }
    case "ref": {
      if (argument === undefined) return fail("ref needs its source: <ref:mount/path#key.path>");
      const parsed = parseRefTarget(argument);
      return parsed.ok ? ok({ kind: "ref", ref: parsed.value }) : fail(parsed.message);
    }
    default:
      return fail(`unknown template "${shorten(name)}"; the templates are ${TEMPLATE_FORMS}`);
  }
}

// The name is echoed so a typo is easy to find; it is capped because the leaf is not ours to print.
function shorten(name: string): string {
  return name.length > 24 ? `${name.slice(0, 24)}…` : name;
}
