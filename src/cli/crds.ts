import { writeReference } from "../apis/reference.js";
import { crdsAsYaml, writeCrds } from "../apis/write.js";

export const crdsHelp = `Usage: platform-operator crds [--write FOLDER] [--reference FOLDER]

Prints the CustomResourceDefinitions of every kind this operator serves (OpenBaoCluster,
OpenBaoRestore, GitLabCore, VaultSeed) as one YAML stream, ready for kubectl apply -f -.
With --write, writes one file per CRD into FOLDER instead (deploy/crds/ in this repository).
With --reference, writes each kind's field reference as Markdown into FOLDER (docs/reference/).`;

export function crdsCommand(write?: string, reference?: string): number {
  if (write || reference) {
    for (const f of write ? writeCrds(write) : []) process.stderr.write(`wrote ${f}\n`);
    for (const f of reference ? writeReference(reference) : []) process.stderr.write(`wrote ${f}\n`);
    return 0;
  }
  process.stdout.write(crdsAsYaml());
  return 0;
}
