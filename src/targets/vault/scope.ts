// Application namespaces: where their VaultSeeds may write and what their references may read.
// A namespace the target's configuration lists under `applications` is an application namespace;
// every other watched namespace is a platform namespace and keeps the whole reach of the
// controller's OpenBao policy. The check is made on the path as OpenBao will store it: an
// application's paths are restricted to plain ASCII segments, so no percent-encoding, Unicode
// look-alike, `.`/`..` or empty segment can make the text compared here differ from the path
// written, and a prefix is matched segment by segment (`apps/a` never covers `apps/ab/x`).

/** What one application namespace may do; prefixes are held as their segments. */
export interface ApplicationScope {
  /** Prefixes its objects may seed. */
  write: readonly (readonly string[])[];
  /** Prefixes its references may copy from: the write prefixes and the read-only ones. */
  read: readonly (readonly string[])[];
}

/** Application namespaces by name; a namespace absent from it is a platform namespace. */
export type ApplicationScopes = ReadonlyMap<string, ApplicationScope>;

/** One segment of an application's path: what KV v2 stores as typed, with nothing to decode. */
const PLAIN_SEGMENT = /^[A-Za-z0-9_.-]+$/;

/** Why `text` is not a plain path (`a/b/c`), or undefined when it is one. */
export function plainPathProblem(text: string): string | undefined {
  const segments = text.split("/");
  if (segments.some((s) => s === "")) return "has an empty segment (leading, trailing or doubled /)";
  for (const s of segments) {
    if (s === "." || s === "..") return "must not contain . or .. segments";
    if (!PLAIN_SEGMENT.test(s))
      return `segment "${shown(s)}" may hold only ASCII letters, digits, ., _ and - (no %, no other characters)`;
  }
  return undefined;
}

/**
 * Parses a configured prefix (`apps/team-a/`, the trailing slash optional) into its segments;
 * returns a problem instead when it is not a plain path.
 */
export function parsePrefix(text: string): { segments: string[] } | { problem: string } {
  const body = text.endsWith("/") ? text.slice(0, -1) : text;
  if (body === "") return { problem: "is empty; a prefix names at least the mount, e.g. apps/team-a/" };
  const problem = plainPathProblem(body);
  return problem ? { problem } : { segments: body.split("/") };
}

export function showPrefix(segments: readonly string[]): string {
  return `${segments.join("/")}/`;
}

function under(path: string, prefixes: readonly (readonly string[])[]): boolean {
  if (plainPathProblem(path) !== undefined) return false;
  const segments = path.split("/");
  return prefixes.some(
    (prefix) => segments.length > prefix.length && prefix.every((s, i) => segments[i] === s),
  );
}

function allowedList(prefixes: readonly (readonly string[])[]): string {
  return prefixes.length === 0 ? "no prefix" : prefixes.map(showPrefix).join(", ");
}

/** Why an object of `namespace` may not seed `path`, or undefined when it may. */
export function writeRefusal(scopes: ApplicationScopes, namespace: string, path: string): string | undefined {
  const scope = scopes.get(namespace);
  if (scope === undefined || under(path, scope.write)) return undefined;
  const problem = plainPathProblem(path);
  const why = problem ? `spec.path ${problem}` : `spec.path ${path} lies outside its prefixes`;
  return `namespace ${namespace} is an application namespace and may seed only under ${allowedList(scope.write)}: ${why}; nothing was written`;
}

/** Why a reference of an object of `namespace` may not copy from `path`, or undefined when it may. */
export function readRefusal(
  scopes: ApplicationScopes,
  namespace: string,
  key: string,
  path: string,
): string | undefined {
  const scope = scopes.get(namespace);
  if (scope === undefined || under(path, scope.read)) return undefined;
  return `${key}: namespace ${namespace} is an application namespace and its references may read only under ${allowedList(scope.read)}; ${shown(path)} is outside them; nothing was written`;
}

/** Whether an object of `namespace` may seed `path` and read every one of `refPaths`. */
export function admits(
  scopes: ApplicationScopes,
  namespace: string,
  path: string,
  refPaths: Iterable<string>,
): boolean {
  if (writeRefusal(scopes, namespace, path) !== undefined) return false;
  for (const p of refPaths) if (readRefusal(scopes, namespace, "", p) !== undefined) return false;
  return true;
}

// A path is not ours to print at any length; look-alikes are shown escaped so the message tells them apart.
function shown(text: string): string {
  const escaped = JSON.stringify(text)
    .slice(1, -1)
    .replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return escaped.length > 80 ? `${escaped.slice(0, 80)}…` : escaped;
}
