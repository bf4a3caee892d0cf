import { crdsAsYaml, writeCrds } from "../apis/write.js";

export const crdsHelp = `Usage: platform-operator crds [--write FOLDER]

Prints the CustomResourceDefinitions of every kind this operator serves (OpenBaoCluster,
OpenBaoRestore, GitLabCore, VaultSeed) as one YAML stream, ready for kubectl apply -f -.
With --write, writes one file per CRD into FOLDER instead (deploy/crds/ in this repository).`;

export function crdsCommand(write?: string): number {
  if (write) {
    for (const f of writeCrds(write)) process.stderr.write(`wrote ${f}\n`);
    return 0;
  }
  process.stdout.write(crdsAsYaml());
  return 0;
}
