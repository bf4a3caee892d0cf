import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

/**
 * Writes the configuration `platform-operator run` takes for the vault target alone on the shared
 * environment: leader election in `ns`, probes on a free loopback port, the backend's address read
 * from the environment variable `addressVar` (so the file also exercises `${VAR}` expansion), and
 * the Kubernetes login vaultSuite sets up for `ns`. Returns the file's path.
 */
export function writeVaultRunConfig(ns: string, prefix: string, addressVar: string): string {
  const config = join(makeTempDir(prefix), "operator.yaml");
  process.env[addressVar] = sharedEnv().bao.addr;
  writeFileSync(
    config,
    `leaderElection: { enabled: true, namespace: ${ns}, leaseName: platform-operator }
probes: { port: 0, host: 127.0.0.1 }
targets:
  vault:
    namespaces: [${ns}]
    resyncInterval: 2s
    backend:
      address: \${${addressVar}}
      allowHttp: true
      auth:
        kubernetes: { mount: k8s-${ns}, role: ohmlab-controller, audience: vault, serviceAccount: { namespace: ${ns}, name: ohmlab-controller } }
`,
  );
  return config;
}
