import type { ManifestDocument, ManifestProblem } from "../runtime/target.js";
import { formatProblem, loadManifests } from "./manifests.js";
import { loadValidators } from "./targets.js";

export const validateHelp = `Usage: platform-operator validate [--charts DIR] [--config FILE] FILE|FOLDER|- [FILE|FOLDER|-]...

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
  const { docs, problems: unread } = loadManifests(args, stdin);
  const problems: ManifestProblem[] = [...unread];
  // Checking nothing must not pass: an empty folder or an empty pipe is most likely a mistake.
  if (docs.length === 0 && unread.length === 0)
    problems.push({
      file: args.map((a) => (a === "-" ? "<stdin>" : a)).join(" "),
      message: "no YAML or JSON documents found",
    });
  for (const check of await loadValidators()) problems.push(...check(docs));
  // GitLabCore is dispatched by kind: its check takes the charts directory, and its modules (the
  // JSON-schema validator, the public suffix list) load only when there is one to check.
  if (docs.some((d) => (d.doc as { kind?: unknown } | null)?.kind === "GitLabCore")) {
    const { validateGitLabCoreDocuments } = await import("../targets/gitlab/validate.js");
    const chartsDir = options.charts ?? (process.env["HELM_CHARTS"] || undefined);
    problems.push(...validateGitLabCoreDocuments(docs, { chartsDir }));
  }
  if (options.config && docs.some((d) => (d.doc as { kind?: unknown } | null)?.kind === "VaultSeed"))
    problems.push(...(await applicationProblems(docs, options.config)));
  for (const p of problems) process.stdout.write(`${formatProblem(p)}\n`);
  if (problems.length) {
    process.stderr.write(`${problems.length} problem(s) in ${docs.length} document(s)\n`);
    return 1;
  }
  process.stderr.write(`${docs.length} document(s) checked, no problems\n`);
  return 0;
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
