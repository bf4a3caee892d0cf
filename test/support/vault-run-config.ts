import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

/**
 * Writes the configuration `platform-operator run` takes for the vault target alone on the shared
 * environment: leader election in `ns` (or `head`, the file's top-level lines instead), probes on a
 * free loopback port, the backend's address read from the environment variable `addressVar` (so the
 * file also exercises `${VAR}` expansion), a 2 s resync unless `resync` is false, and the Kubernetes
 * login vaultSuite sets up for `ns`. Returns the file's path.
 */
export function writeVaultRunConfig(
  ns: string,
  prefix: string,
  addressVar: string,
  opts: { head?: string; resync?: boolean } = {},
): string {
  const config = join(makeTempDir(prefix), "operator.yaml");
  process.env[addressVar] = sharedEnv().bao.addr;
  const head =
    opts.head ?? `leaderElection: { enabled: true, namespace: ${ns}, leaseName: platform-operator }`;
  writeFileSync(
    config,
    `${head}
probes: { port: 0, host: 127.0.0.1 }
targets:
  vault:
    namespaces: [${ns}]
${opts.resync === false ? "" : "    resyncInterval: 2s\n"}    backend:
      address: \${${addressVar}}
      allowHttp: true
      auth:
        kubernetes: { mount: k8s-${ns}, role: ohmlab-controller, audience: vault, serviceAccount: { namespace: ${ns}, name: ohmlab-controller } }
`,
  );
  return config;
}
