/**
 * Who may set what: the admission rules that ask the API server's authorizer (CEL `authorizer` in
 * the chart's ValidatingAdmissionPolicies) whether the writer holds, besides `update` on the object,
 * upstream's extra verbs on `openbaoclusters` for a sensitive field (restore, maintenance,
 * usecloudidentities, usecustomexecutables or its older alias usehelperimages, useimagetrustroots),
 * and `get` on every Secret the object lends to the cluster's pods or Jobs.
 *
 * A rule asks only when the field is set and its value differs from the stored object's: an admin
 * sets a custom backup image once, and an editor without the verb still scales the cluster; an
 * update that leaves the field as it was (finalizers, labels, status writers) never asks. Upstream
 * asks on every write that carries the field; asking on change is the narrower promise "who may SET
 * what", and it keeps the operator's own metadata writes free of verbs it does not hold.
 *
 * The TypeScript half is given an authorizer by the tests; offline (`validate`) there is nobody to
 * ask, so these rules admit there.
 */

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const at = (v: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((cur, k) => (isObject(cur) ? cur[k] : undefined), v);
const str = (v: unknown, path: string): string => {
  const s = at(v, path);
  return typeof s === "string" ? s : "";
};

/** One question to the authorizer, in the object's namespace. */
export interface AuthorizationCheck {
  group: string;
  resource: string;
  name: string;
  verb: string;
}
export type Authorizer = (check: AuthorizationCheck) => boolean;

/** What a delegation rule sees (a subset of rules.ts' RuleInput, which passes it on). */
export interface DelegationInput {
  object: unknown;
  oldObject?: unknown;
  authorizer?: Authorizer;
}

export interface DelegationRule {
  id: string;
  /** The field the rule guards (message and tests). */
  field: string;
  /** The verbs (any one of them) or "get on Secrets" it needs: for docs and tests. */
  needs: string;
  message: string;
  cel: string;
  admits(input: DelegationInput): boolean;
}

/** JSON equality of two decoded values, for "did the field change". */
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

// ---------------------------------------------------------------- verbs on the cluster

interface VerbGuard {
  id: string;
  field: string;
  /** Any one of these verbs on the cluster suffices. */
  verbs: string[];
  /** CEL under root r: the field's value, compared with the stored object's. */
  value: (r: string) => string;
  /** CEL under `object`: the field is set (so the rule asks). */
  set: string;
  tsValue: (o: unknown) => unknown;
  tsSet: (o: unknown) => boolean;
  why: string;
}

const clusterCheck = (nameCel: string, verb: string) =>
  `authorizer.group("openbao.org").resource("openbaoclusters").namespace(request.namespace).name(${nameCel}).check("${verb}").allowed()`;

/** `cluster`: CEL and TypeScript for the name of the OpenBaoCluster the verb is asked on. */
function verbRule(g: VerbGuard, cluster: { cel: string; ts: (o: unknown) => string }): DelegationRule {
  const verbs = g.verbs.join(" or ");
  return {
    id: g.id,
    field: g.field,
    needs: verbs,
    message: `${g.field}: setting or changing it needs the verb ${verbs} on openbaoclusters (openbao.org) for the OpenBaoCluster, besides update: ${g.why}.`,
    cel: `!(${g.set}) || (oldObject != null && ${g.value("object")} == ${g.value("oldObject")}) || ${g.verbs
      .map((v) => clusterCheck(cluster.cel, v))
      .join(" || ")}`,
    admits: ({ object: o, oldObject: old, authorizer }) =>
      !g.tsSet(o) ||
      (old !== undefined && same(g.tsValue(o), g.tsValue(old))) ||
      authorizer === undefined ||
      g.verbs.some((verb) =>
        authorizer({ group: "openbao.org", resource: "openbaoclusters", name: cluster.ts(o), verb }),
      ),
  };
}

/** A string field: set when not empty. */
const text = (path: string) => ({
  value: (r: string) => `${r}.${optional(path)}.orValue("")`,
  set: `object.${optional(path)}.orValue("") != ""`,
  tsValue: (o: unknown) => str(o, path),
  tsSet: (o: unknown) => str(o, path) !== "",
});
/** Any value: set when present. */
const present = (path: string, empty: "{}" | "[]" | "false" = "{}") => ({
  value: (r: string) => `${r}.${optional(path)}.orValue(${empty})`,
  set:
    empty === "false"
      ? `object.${optional(path)}.orValue(false) == true`
      : `size(object.${optional(path)}.orValue(${empty})) > 0`,
  tsValue: (o: unknown) => at(o, path),
  tsSet: (o: unknown) => {
    const v = at(o, path);
    if (empty === "false") return v === true;
    return Array.isArray(v) ? v.length > 0 : isObject(v) && Object.keys(v).length > 0;
  },
});
/** `spec.backup.image` → `spec.?backup.?image` (every step optional). */
const optional = (path: string) => path.split(".").join(".?");

const CUSTOM = ["usecustomexecutables", "usehelperimages"];
const CUSTOM_WHY = "a custom executable runs with the cluster's identities and mounts";
const CLOUD_WHY = "cloud identity metadata lends the cluster's pods or Jobs a cloud role";

/** Pod annotation and label keys that bind a cloud identity (upstream's list). */
const CLOUD_ANNOTATION = [
  "eks.amazonaws.com/",
  "iam.amazonaws.com/",
  "iam.gke.io/",
  "azure.workload.identity/",
];
const cloudPodMetadata = {
  value: (r: string) => `${r}.spec.?podMetadata.orValue({})`,
  set: `object.spec.?podMetadata.?annotations.orValue({}).exists(k, ${CLOUD_ANNOTATION.map((p) => `k.startsWith("${p}")`).join(" || ")}) || object.spec.?podMetadata.?labels.orValue({}).exists(k, k.startsWith("azure.workload.identity/") || k == "aadpodidbinding")`,
  tsValue: (o: unknown) => at(o, "spec.podMetadata"),
  tsSet: (o: unknown) => {
    const ann = at(o, "spec.podMetadata.annotations");
    const labels = at(o, "spec.podMetadata.labels");
    return (
      (isObject(ann) && Object.keys(ann).some((k) => CLOUD_ANNOTATION.some((p) => k.startsWith(p)))) ||
      (isObject(labels) &&
        Object.keys(labels).some((k) => k.startsWith("azure.workload.identity/") || k === "aadpodidbinding"))
    );
  },
};

/** Custom trust roots in an image verification block (upstream asks only under Hardened). */
const TRUST_ROOT_KEYS = ["publicKey", "issuer", "subject", "issuerRegExp", "subjectRegExp"];
const trustRoots = (block: string) => ({
  value: (r: string) => `${r}.spec.?${block}.orValue({})`,
  set: `object.spec.?profile.orValue("") == "Hardened" && (${TRUST_ROOT_KEYS.map((k) => `object.spec.?${block}.?${k}.orValue("") != ""`).join(" || ")} || object.spec.?${block}.?ignoreTlog.orValue(false) == true)`,
  tsValue: (o: unknown) => at(o, `spec.${block}`),
  tsSet: (o: unknown) =>
    str(o, "spec.profile") === "Hardened" &&
    (TRUST_ROOT_KEYS.some((k) => str(o, `spec.${block}.${k}`) !== "") ||
      at(o, `spec.${block}.ignoreTlog`) === true),
});

/** Plugins that bring their own image or command. */
const pluginExecutables = {
  value: (r: string) =>
    `${r}.spec.?plugins.orValue([]).map(p, [p.?image.orValue(""), p.?command.orValue("")])`,
  set: `object.spec.?plugins.orValue([]).exists(p, p.?image.orValue("") != "" || p.?command.orValue("") != "")`,
  tsValue: (o: unknown) =>
    (Array.isArray(at(o, "spec.plugins")) ? (at(o, "spec.plugins") as unknown[]) : []).map((p) => [
      str(p, "image"),
      str(p, "command"),
    ]),
  tsSet: (o: unknown) =>
    (Array.isArray(at(o, "spec.plugins")) ? (at(o, "spec.plugins") as unknown[]) : []).some(
      (p) => str(p, "image") !== "" || str(p, "command") !== "",
    ),
};

const SELF = { cel: "object.metadata.name", ts: (o: unknown) => str(o, "metadata.name") };
const RESTORED = { cel: "object.spec.cluster", ts: (o: unknown) => str(o, "spec.cluster") };

const CLUSTER_VERBS: VerbGuard[] = [
  {
    id: "verb-backup-image",
    field: "spec.backup.image",
    verbs: CUSTOM,
    why: CUSTOM_WHY,
    ...text("spec.backup.image"),
  },
  {
    id: "verb-upgrade-image",
    field: "spec.upgrade.image",
    verbs: CUSTOM,
    why: CUSTOM_WHY,
    ...text("spec.upgrade.image"),
  },
  {
    id: "verb-validation-hook",
    field: "spec.upgrade.blueGreen.verification.prePromotionHook",
    verbs: CUSTOM,
    why: CUSTOM_WHY,
    ...present("spec.upgrade.blueGreen.verification.prePromotionHook"),
  },
  {
    id: "verb-init-container-image",
    field: "spec.initContainer.image",
    verbs: CUSTOM,
    why: CUSTOM_WHY,
    ...text("spec.initContainer.image"),
  },
  {
    id: "verb-plugin-executables",
    field: "spec.plugins[].image/command",
    verbs: CUSTOM,
    why: CUSTOM_WHY,
    ...pluginExecutables,
  },
  {
    id: "verb-service-account-annotations",
    field: "spec.serviceAccount.annotations",
    verbs: ["usecloudidentities"],
    why: CLOUD_WHY,
    ...present("spec.serviceAccount.annotations"),
  },
  {
    id: "verb-pod-cloud-identity",
    field: "spec.podMetadata (cloud identity annotations or labels)",
    verbs: ["usecloudidentities"],
    why: CLOUD_WHY,
    ...cloudPodMetadata,
  },
  {
    id: "verb-backup-role-arn",
    field: "spec.backup.target.roleArn",
    verbs: ["usecloudidentities"],
    why: CLOUD_WHY,
    ...text("spec.backup.target.roleArn"),
  },
  {
    id: "verb-backup-workload-identity",
    field: "spec.backup.target.workloadIdentity",
    verbs: ["usecloudidentities"],
    why: CLOUD_WHY,
    ...present("spec.backup.target.workloadIdentity"),
  },
  {
    id: "verb-image-trust-roots",
    field: "spec.imageVerification (trust roots, profile Hardened)",
    verbs: ["useimagetrustroots"],
    why: "custom trust roots decide which images count as signed",
    ...trustRoots("imageVerification"),
  },
  {
    id: "verb-operator-image-trust-roots",
    field: "spec.operatorImageVerification (trust roots, profile Hardened)",
    verbs: ["useimagetrustroots"],
    why: "custom trust roots decide which images count as signed",
    ...trustRoots("operatorImageVerification"),
  },
  {
    id: "verb-maintenance",
    field: "spec.maintenance.enabled",
    verbs: ["maintenance"],
    why: "maintenance opens the cluster's managed objects to direct edits",
    ...present("spec.maintenance.enabled", "false"),
  },
];

// ---------------------------------------------------------------- get on referenced Secrets

interface SecretGuard {
  id: string;
  field: string;
  /** CEL under root r: the list of Secret names the field refers to (blanks left in). */
  names: (r: string) => string;
  tsNames: (o: unknown) => string[];
}

const secretCheck = (nameCel: string) =>
  `authorizer.group("").resource("secrets").namespace(request.namespace).name(${nameCel}).check("get").allowed()`;

function secretRule(g: SecretGuard): DelegationRule {
  return {
    id: g.id,
    field: g.field,
    needs: "get on the Secret",
    message: `${g.field}: setting or changing it needs get on each Secret it names (secrets, in the object's namespace): the operator lends that Secret to the cluster's pods or Jobs.`,
    cel: `size(${g.names("object")}.filter(n, n != "")) == 0 || (oldObject != null && ${g.names("object")} == ${g.names("oldObject")}) || ${g.names("object")}.all(n, n == "" || ${secretCheck("n")})`,
    admits: ({ object: o, oldObject: old, authorizer }) => {
      const names = g.tsNames(o).filter((n) => n !== "");
      return (
        names.length === 0 ||
        (old !== undefined && same(g.tsNames(o), g.tsNames(old))) ||
        authorizer === undefined ||
        names.every((name) => authorizer({ group: "", resource: "secrets", name, verb: "get" }))
      );
    },
  };
}

/** One reference `{name}` at a path. */
const ref = (id: string, path: string): SecretGuard => ({
  id,
  field: path,
  names: (r) => `[${r}.${optional(path)}.?name.orValue("")]`,
  tsNames: (o) => [str(o, `${path}.name`)],
});
/** A list of references `[{name}]` at a path. */
const refs = (id: string, path: string): SecretGuard => ({
  id,
  field: `${path}[]`,
  names: (r) => `${r}.${optional(path)}.orValue([]).map(s, s.?name.orValue(""))`,
  tsNames: (o) => {
    const l = at(o, path);
    return Array.isArray(l) ? l.map((s) => str(s, "name")) : [];
  },
});
/** A Secret named by a plain string field. */
const named = (id: string, path: string): SecretGuard => ({
  id,
  field: path,
  names: (r) => `[${r}.${optional(path)}.orValue("")]`,
  tsNames: (o) => [str(o, path)],
});

const CLUSTER_SECRETS: SecretGuard[] = [
  ref("secret-unseal-credentials", "spec.unseal.credentialsSecretRef"),
  ref("secret-backup-credentials", "spec.backup.target.credentialsSecretRef"),
  ref("secret-backup-token", "spec.backup.tokenSecretRef"),
  refs("secret-image-pull", "spec.imagePullSecrets"),
  refs("secret-image-verification-pull", "spec.imageVerification.imagePullSecrets"),
  refs("secret-operator-image-verification-pull", "spec.operatorImageVerification.imagePullSecrets"),
  named("secret-tls-ca", "spec.tls.caSecretName"),
  named("secret-tls-server", "spec.tls.serverSecretName"),
  ref("secret-acme-ca", "spec.tls.acme.caCertSecretRef"),
  named("secret-ingress-tls", "spec.ingress.tlsSecretName"),
  ref(
    "secret-metrics-authorization",
    "spec.observability.metrics.serviceMonitor.authorization.credentialsSecret",
  ),
  ref("secret-metrics-ca", "spec.observability.metrics.serviceMonitor.tlsConfig.caSecret"),
];

const RESTORE_SECRETS: SecretGuard[] = [
  ref("restore-secret-credentials", "spec.source.target.credentialsSecretRef"),
  ref("restore-secret-token", "spec.tokenSecretRef"),
];

const RESTORE_VERBS: VerbGuard[] = [
  {
    id: "verb-restore",
    field: "spec.cluster",
    verbs: ["restore"],
    why: "a restore replaces the named cluster's data, policies and keys",
    value: (r) => `${r}.spec`,
    set: "true",
    tsValue: (o) => at(o, "spec"),
    tsSet: () => true,
  },
  {
    id: "verb-restore-image",
    field: "spec.image",
    verbs: CUSTOM,
    why: "the restore executor runs with the restore's credentials",
    ...text("spec.image"),
  },
  {
    id: "verb-restore-role-arn",
    field: "spec.source.target.roleArn",
    verbs: ["usecloudidentities"],
    why: CLOUD_WHY,
    ...text("spec.source.target.roleArn"),
  },
  {
    id: "verb-restore-workload-identity",
    field: "spec.source.target.workloadIdentity",
    verbs: ["usecloudidentities"],
    why: CLOUD_WHY,
    ...present("spec.source.target.workloadIdentity"),
  },
];

export const CLUSTER_DELEGATION: readonly DelegationRule[] = [
  ...CLUSTER_VERBS.map((g) => verbRule(g, SELF)),
  ...CLUSTER_SECRETS.map(secretRule),
];
export const RESTORE_DELEGATION: readonly DelegationRule[] = [
  ...RESTORE_VERBS.map((g) => verbRule(g, RESTORED)),
  ...RESTORE_SECRETS.map(secretRule),
];
