import type { ManifestDocument, ManifestProblem } from "../runtime/target.js";
import { formatProblem, loadManifests } from "./manifests.js";
import { loadValidators } from "./targets.js";

export const validateHelp = `Usage: platform-operator validate [--charts DIR] [--config FILE] [--admission-policies [--operator-namespace NS]] FILE|FOLDER|- [FILE|FOLDER|-]...

Checks manifests offline, without a cluster: each target checks its own kinds (for VaultSeed:
templates, bcrypt and rotation keys, key names, duplicate paths and names, reference cycles; for
OpenBaoCluster: version and image tag, storage size, TLS mode settings, seal blocks, self-init
requests; for OpenBaoRestore: cluster, snapshot key, force; for
GitLabCore: the schema and union rules of the definition, unknown fields, the effective chart values,
repeated names and hostnames). With a charts directory (--charts DIR, else $HELM_CHARTS; laid out
as gitlab-<version>.tgz or gitlab/<version>/), GitLabCore's effective values are also checked against
the values.schema.json of the chart its version resolves to. With the operator's configuration
(--config FILE, as given to run), VaultSeeds of the vault target's application namespaces are also
checked against their prefixes: a path outside them, or a reference to a path they may not read.
With --admission-policies, OpenBaoClusters, OpenBaoRestores and OpenBaoTenants are also checked
against the rules of the chart's admission policies (admissionPolicies.enabled), with the messages
the API server would refuse them with (the rules of an update, storage class and size, need the
live object). A tenant outside the operator's namespace may onboard only its own: that namespace is
--operator-namespace NS, the chart's release namespace (default platform-operator-system); a tenant
without metadata.namespace is taken to be in "default".
Reads YAML or JSON files, folders (recursively) or "-" for standard input, e.g.

  helm template my-release ./chart | platform-operator validate -

Prints one line per problem (file:line, document number, object, key, problem) and exits 1 when
there is any; a file that is missing or does not parse is a problem too, and the other files are
still checked.`;

export interface ValidateOptions {
  /** Charts directory for GitLabCore's chart schema check. */
  charts?: string | undefined;
  /** The operator's configuration file: the vault target's application namespaces are checked too. */
  config?: string | undefined;
  /** Also the rules of the chart's admission policies for the openbao kinds. */
  admissionPolicies?: boolean | undefined;
  /** The operator's namespace for the tenant rule (default: DEFAULT_OPERATOR_NAMESPACE). */
  operatorNamespace?: string | undefined;
}

export async function validateCommand(
  args: string[],
  stdin?: () => string,
  options: ValidateOptions = {},
): Promise<number> {
  if (args.length === 0) {
    // Reading stdin when nothing was named would wait on a terminal, or check nothing and pass.
    throw new Error(
      "validate: name the manifests to check: files, folders, or - for standard input (see 'platform-operator validate --help')",
    );
  }
  if (options.operatorNamespace !== undefined && !options.admissionPolicies)
    throw new Error("validate: --operator-namespace is read only with --admission-policies");
  const { docs, problems: unread } = loadManifests(args, stdin);
  const problems: ManifestProblem[] = [...unread];
  // Checking nothing must not pass: an empty folder or an empty pipe is most likely a mistake.
  if (docs.length === 0 && unread.length === 0)
    problems.push({
      file: args.map((a) => (a === "-" ? "<stdin>" : a)).join(" "),
      message: "no YAML or JSON documents found",
    });
  const shapes = await shapeProblems(docs);
  const targetProblems: ManifestProblem[] = [];
  for (const check of await loadValidators()) targetProblems.push(...check(docs));
  // GitLabCore is dispatched by kind: its check takes the charts directory, and its modules (the
  // JSON-schema validator, the public suffix list) load only when there is one to check.
  if (docs.some((d) => (d.doc as { kind?: unknown } | null)?.kind === "GitLabCore")) {
    const { validateGitLabCoreDocuments } = await import("../targets/gitlab/validate.js");
    const chartsDir = options.charts ?? (process.env["HELM_CHARTS"] || undefined);
    targetProblems.push(...validateGitLabCoreDocuments(docs, { chartsDir }));
  }
  if (options.admissionPolicies) {
    const { admissionPolicyProblems } = await import("../targets/openbao/validate/policies.js");
    targetProblems.push(...admissionPolicyProblems(docs, options.operatorNamespace));
  }
  if (options.config && docs.some((d) => (d.doc as { kind?: unknown } | null)?.kind === "VaultSeed"))
    targetProblems.push(...(await applicationProblems(docs, options.config)));
  problems.push(...withoutRepeats(shapes, targetProblems), ...targetProblems);
  for (const p of problems) process.stdout.write(`${formatProblem(p)}\n`);
  const errors = problems.filter((p) => p.severity !== "warning").length;
  const warnings = problems.length - errors;
  const warned = warnings > 0 ? `, ${warnings} warning(s)` : "";
  if (errors > 0) {
    process.stderr.write(`${errors} problem(s)${warned} in ${docs.length} document(s)\n`);
    return 1;
  }
  process.stderr.write(`${docs.length} document(s) checked, no problems${warned}\n`);
  return 0;
}

/** Each document against what every Kubernetes object is and, for our kinds, their CRD's schema. */
async function shapeProblems(docs: ManifestDocument[]): Promise<ManifestProblem[]> {
  const { documentShape } = await import("../apis/object-check.js");
  const problems: ManifestProblem[] = [];
  for (const d of docs) {
    const { errors } = documentShape(d.doc);
    const object = objectLabel(d.doc);
    for (const e of errors)
      problems.push({
        file: d.file,
        document: d.document,
        line: d.line,
        ...(object ? { object } : {}),
        ...(e.path ? { key: e.path } : {}),
        message: e.message,
      });
  }
  return problems;
}

function objectLabel(doc: unknown): string | undefined {
  const meta = (doc as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
  if (typeof meta?.name !== "string") return undefined;
  return typeof meta.namespace === "string" ? `${meta.namespace}/${meta.name}` : meta.name;
}

// A field the schema check reported and a target's own check reported again, in its own words
// (which know the kind: "is not a semantic version such as 2.4.1"), is one problem: the schema
// check's line is dropped. Its lines about other fields stay.
function withoutRepeats(shapes: ManifestProblem[], problems: ManifestProblem[]): ManifestProblem[] {
  const place = (p: ManifestProblem) => `${p.file}\u0000${p.document}\u0000${p.line}`;
  const reported = new Map<string, string[]>();
  for (const p of problems) {
    const field = p.key ?? /^((?:spec|metadata|apiVersion|kind)[\w.[\]-]*)/.exec(p.message)?.[1];
    if (field) reported.set(place(p), [...(reported.get(place(p)) ?? []), field]);
  }
  return shapes.filter((s) => !s.key || !reported.get(place(s))?.includes(s.key));
}
/** The vault target's application namespaces, read from the operator's configuration file. */
async function applicationProblems(docs: ManifestDocument[], configPath: string): Promise<ManifestProblem[]> {
  const { loadConfigFile } = await import("./config.js");
  const { parseApplications } = await import("../targets/vault/config.js");
  const { validateApplicationScopes } = await import("../targets/vault/validate.js");
  const vault = loadConfigFile(configPath).targets.get("vault");
  if (!vault) return [];
  const scopes = parseApplications(vault.section["applications"], "targets.vault.applications");
  return validateApplicationScopes(docs, scopes);
}
