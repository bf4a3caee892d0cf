import type { ManifestProblem } from "../runtime/target.js";
import { readManifests } from "./manifests.js";
import { loadImplementedTargets } from "./targets.js";

export const validateHelp = `Usage: platform-operator validate [FILE|FOLDER|-]...

Checks manifests offline, without a cluster: each target checks its own kinds (for VaultSeed:
templates, bcrypt and rotation keys, key names, duplicate paths and names, reference cycles).
Reads YAML or JSON files, folders (recursively) or "-" for standard input, e.g.

  helm template my-release ./chart | platform-operator validate -

Prints one line per problem (file, object, key, problem) and exits 1 when there is any.`;

export async function validateCommand(args: string[]): Promise<number> {
  const sources = args.length ? args : ["-"];
  const docs = readManifests(sources);
  const problems: ManifestProblem[] = [];
  for (const t of await loadImplementedTargets()) problems.push(...(t.validate?.(docs) ?? []));
  for (const p of problems) {
    // Some checks already lead their message with the key; say it once.
    const key = p.key && !p.message.startsWith(`${p.key}: `) ? p.key : undefined;
    const where = [p.file, p.object, key].filter(Boolean).join(": ");
    process.stdout.write(`${where}: ${p.message}\n`);
  }
  if (problems.length) {
    process.stderr.write(`${problems.length} problem(s) in ${docs.length} document(s)\n`);
    return 1;
  }
  process.stderr.write(`${docs.length} document(s) checked, no problems\n`);
  return 0;
}
