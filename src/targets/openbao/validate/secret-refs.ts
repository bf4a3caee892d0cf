/**
 * Secret references whose `name` upstream defaults to "" (corev1.LocalObjectReference): `{}` is
 * accepted by the API server, here as upstream, and means a reference that names nothing. Upstream
 * then asks for a Secret named "" and fails somewhere inside; here each one is said by its field,
 * and the part that needs it waits instead of reading a Secret that cannot exist (or falling back
 * to a stronger credential the user did not choose). Pure and schema-free: the run path uses it.
 */

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const at = (o: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((x, k) => (isObject(x) ? x[k] : undefined), o);

/** A reference that is present but names nothing: `{}`, `{name: ""}` or a name of blanks. */
export const namesNothing = (ref: unknown): boolean => {
  if (!isObject(ref)) return false;
  const name = ref["name"];
  return name === undefined || name === null || (typeof name === "string" && name.trim() === "");
};

/**
 * What each reference is for, so the message says what waits; `unless`: a sibling that wins over
 * the reference (a JWT role is used instead of a token, as upstream does), so then it asks nothing.
 */
const CLUSTER_REFS: readonly { path: string[]; what: string; unless?: string[] }[] = [
  {
    path: ["backup", "target", "credentialsSecretRef"],
    what: "backups wait until it names the object store's credentials Secret (or the field is left out)",
  },
  {
    path: ["backup", "tokenSecretRef"],
    what: "backups wait until it names the token Secret (or it is left out and spec.backup.jwtAuthRole set)",
    unless: ["backup", "jwtAuthRole"],
  },
  {
    path: ["upgrade", "tokenSecretRef"],
    what: "upgrades wait until it names the token Secret (or it is left out and spec.upgrade.jwtAuthRole set)",
    unless: ["upgrade", "jwtAuthRole"],
  },
  {
    path: ["unseal", "credentialsSecretRef"],
    what: "no seal credentials Secret is mounted until it names one",
  },
];

export interface EmptyReference {
  /** `spec.…​.name`, from the object's root. */
  field: string;
  message: string;
}

const empty = (field: string, what: string): EmptyReference => ({
  field: `${field}.name`,
  message: `is empty: ${what}`,
});

/** The OpenBaoCluster's references that name nothing, in a fixed order. */
export function emptyClusterReferences(spec: unknown): EmptyReference[] {
  const out: EmptyReference[] = [];
  for (const { path, what, unless } of CLUSTER_REFS)
    if (namesNothing(at(spec, ...path)) && !(unless && at(spec, ...unless)))
      out.push(empty(`spec.${path.join(".")}`, what));
  const pulls = at(spec, "imagePullSecrets");
  if (Array.isArray(pulls))
    pulls.forEach((p, i) => {
      if (namesNothing(p))
        out.push(empty(`spec.imagePullSecrets[${i}]`, "left out of the pods, which pull without it"));
    });
  return out;
}

/** The OpenBaoRestore's: a restore is immutable, so one that names nothing never runs. */
export function emptyRestoreReferences(spec: unknown): EmptyReference[] {
  const out: EmptyReference[] = [];
  if (namesNothing(at(spec, "source", "target", "credentialsSecretRef")))
    out.push(
      empty(
        "spec.source.target.credentialsSecretRef",
        "the restore cannot read the object store's credentials; create a new OpenBaoRestore that names the Secret (or leaves the field out)",
      ),
    );
  // A JWT role wins over the token, so an empty token reference then asks for nothing.
  if (namesNothing(at(spec, "tokenSecretRef")) && !at(spec, "jwtAuthRole"))
    out.push(
      empty(
        "spec.tokenSecretRef",
        "the restore has no token to log in with; create a new OpenBaoRestore that names the Secret, or sets spec.jwtAuthRole",
      ),
    );
  return out;
}

/** The message of one reference, as conditions and waits print it. */
export const describeEmpty = (r: EmptyReference): string => `${r.field} ${r.message}`;

/**
 * The pull Secrets that name one, for a pod spec; undefined when none does (the field is left out).
 * An entry that names nothing is reported (SecretReferencesNamed) and kept off the pods.
 */
export function namedPullSecrets(refs: unknown): { name: string }[] | undefined {
  if (!Array.isArray(refs)) return undefined;
  const named = refs.filter((r) => !namesNothing(r) && isObject(r)).map((r) => ({ name: String(r["name"]) }));
  return named.length > 0 ? named : undefined;
}
