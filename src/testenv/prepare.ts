import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Binaries, ensureBinaries } from "./binaries.js";
import { ensureCosign } from "./cosign.js";
import { formatDuration } from "./duration.js";
import { ensureGpg } from "./gpg.js";
import { ensureHelm } from "./helm.js";
import { prepareNode } from "./node/prepare.js";
import { ensureOciRegistry } from "./oci-registry.js";
import { ensureOpenssl } from "./openssl.js";
import { type Progress, progressOn } from "./progress.js";

/** Everything the tests need on this machine, fetched or built once into the cache. */
export async function prepareTestEnv(log: (line: string) => void, progress?: Progress): Promise<Binaries> {
  await ensureOpenssl(log);
  const binaries = await ensureBinaries({ onProgress: log, progress });
  // Real Helm renders the GitLab chart in the gitlab target's tests, which sign their fixture
  // charts with a key gpg makes.
  await ensureHelm(log);
  await ensureGpg(log);
  // The image-signing test signs the image with cosign in a registry of its own on loopback.
  await ensureCosign(log);
  await ensureOciRegistry(log);
  await prepareNode(binaries, log);
  return binaries;
}

async function main(): Promise<void> {
  const started = Date.now();
  // One updating line on a terminal, plain lines in CI.
  const progress = progressOn(process.stdout, { prefix: "[testenv] " });
  const log = (line: string) => progress.line(line);
  const binaries = await prepareTestEnv(log, progress);
  log(`kube-apiserver          ${binaries.kubeApiserver}`);
  log(`kube-controller-manager ${binaries.kubeControllerManager}`);
  log(`etcd                    ${binaries.etcd}`);
  for (const [version, path] of Object.entries(binaries.bao)) log(`bao ${version.padEnd(19)} ${path}`);
  log(`helm                    ${await ensureHelm()}`);
  log(`cosign                  ${await ensureCosign()}`);
  log(`docker-registry         ${await ensureOciRegistry()}`);
  log(`ready in ${formatDuration(Date.now() - started)}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`[testenv] ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
