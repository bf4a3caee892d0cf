import { join, relative } from "node:path";
import { exists, populateAtomically } from "../atomic.js";
import { cacheRoot, KUBERNETES_VERSION } from "../cache.js";
import { formatDuration } from "../duration.js";
import { hashFiles, listFiles } from "../filehash.js";
import { goBuildArgs } from "../gobuild.js";
import { goModuleDir } from "../paths.js";
import { ensureAptPackages } from "./apt.js";
import { runGo } from "./gotool.js";
import {
  CNI_PLUGINS_VERSION,
  CONTAINERD_VERSION,
  COREDNS_VERSION,
  LOCAL_PATH_PROVISIONER_VERSION,
  NODE_APT_PACKAGES,
  RUNC_VERSION,
} from "./versions.js";

export interface NodeBinaries {
  runc: string;
  containerd: string;
  containerdShim: string;
  ctr: string;
  /** Folder holding the CNI plugins bridge, host-local, loopback and portmap. */
  cniBinDir: string;
  kubelet: string;
  kubeProxy: string;
  kubeScheduler: string;
  kubectl: string;
  coredns: string;
  localPathProvisioner: string;
}

// Static where cgo buys nothing, so the same binaries can go into images.
const STATIC = { CGO_ENABLED: "0" };
const FLAGS = ["-trimpath", "-buildvcs=false"];

interface Piece {
  label: string;
  dir: string;
  files: string[];
  build(scratch: string, onProgress: (line: string) => void): Promise<void>;
}

let pending: Promise<NodeBinaries> | undefined;

/** The node's binaries from the cache, building only what is missing (one build per process). */
export function ensureNodeBinaries(onProgress: (line: string) => void = () => {}): Promise<NodeBinaries> {
  if (!pending) {
    pending = resolve(onProgress);
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending;
}

async function resolve(onProgress: (line: string) => void): Promise<NodeBinaries> {
  const root = cacheRoot();
  const kubeDir = join(goModuleDir(), "kubenode");
  const corednsDir = join(goModuleDir(), "coredns");
  const goInstall = (label: string, env: Record<string, string>, ldflags: string, pkgs: string[]) => {
    return (scratch: string, progress: (line: string) => void) =>
      runGo({
        label,
        args: ["install", "-v", ...FLAGS, `-ldflags=${ldflags}`, ...pkgs],
        cwd: root,
        env: { ...env, GOBIN: scratch },
        onProgress: progress,
      });
  };
  const cni = (p: string) => `github.com/containernetworking/plugins/plugins/${p}@${CNI_PLUGINS_VERSION}`;
  const ctrd = (c: string) => `github.com/containerd/containerd/v2/cmd/${c}@${CONTAINERD_VERSION}`;
  const pieces: Piece[] = [
    {
      label: `runc ${RUNC_VERSION}`,
      dir: join(root, `runc-${RUNC_VERSION}`),
      files: ["runc"],
      // cgo for seccomp (libseccomp-dev): without it runc cannot apply the RuntimeDefault profile.
      build: goInstall(
        `runc ${RUNC_VERSION}`,
        { CGO_ENABLED: "1" },
        `-s -w -X main.version=${RUNC_VERSION.slice(1)}`,
        ["-tags", "seccomp", `github.com/opencontainers/runc@${RUNC_VERSION}`],
      ),
    },
    {
      label: `containerd ${CONTAINERD_VERSION}`,
      dir: join(root, `containerd-${CONTAINERD_VERSION}`),
      files: ["containerd", "containerd-shim-runc-v2", "ctr"],
      build: goInstall(
        `containerd ${CONTAINERD_VERSION}`,
        STATIC,
        `-s -w -X github.com/containerd/containerd/v2/version.Version=${CONTAINERD_VERSION.slice(1)}`,
        [ctrd("containerd"), ctrd("containerd-shim-runc-v2"), ctrd("ctr")],
      ),
    },
    {
      label: `CNI plugins ${CNI_PLUGINS_VERSION}`,
      dir: join(root, `cni-plugins-${CNI_PLUGINS_VERSION}`),
      files: ["bridge", "host-local", "loopback", "portmap"],
      build: goInstall(`CNI plugins ${CNI_PLUGINS_VERSION}`, STATIC, "-s -w", [
        cni("main/bridge"),
        cni("ipam/host-local"),
        cni("main/loopback"),
        cni("meta/portmap"),
      ]),
    },
    {
      label: `local-path-provisioner ${LOCAL_PATH_PROVISIONER_VERSION}`,
      dir: join(root, `local-path-provisioner-${LOCAL_PATH_PROVISIONER_VERSION}`),
      files: ["local-path-provisioner"],
      build: goInstall(`local-path-provisioner ${LOCAL_PATH_PROVISIONER_VERSION}`, STATIC, "-s -w", [
        `github.com/rancher/local-path-provisioner@${LOCAL_PATH_PROVISIONER_VERSION}`,
      ]),
    },
    {
      label: `CoreDNS ${COREDNS_VERSION}`,
      dir: join(root, `coredns-${COREDNS_VERSION}-${await moduleHash(corednsDir)}`),
      files: ["coredns"],
      build: (scratch, progress) =>
        runGo({
          label: `CoreDNS ${COREDNS_VERSION}`,
          args: ["build", "-v", ...FLAGS, "-ldflags=-s -w", "-o", join(scratch, "coredns"), "."],
          cwd: corednsDir,
          env: STATIC,
          onProgress: progress,
        }),
    },
    {
      // Same module versions, flags and cgo setting as the control plane's build (gobuild.ts), so
      // the shared packages come out of Go's build cache.
      label: `kubelet, kube-proxy, kube-scheduler, kubectl ${KUBERNETES_VERSION}`,
      dir: join(root, `k8s-node-${KUBERNETES_VERSION}-${await moduleHash(kubeDir)}`),
      files: ["kubelet", "kube-proxy", "kube-scheduler", "kubectl"],
      build: (scratch, progress) =>
        runGo({
          label: `Kubernetes node ${KUBERNETES_VERSION}`,
          args: goBuildArgs(scratch),
          cwd: kubeDir,
          onProgress: progress,
        }),
    },
  ];
  const missing: Piece[] = [];
  for (const piece of pieces) if (!(await exists(piece.dir))) missing.push(piece);
  if (missing.length > 0) await ensureAptPackages(NODE_APT_PACKAGES, onProgress);
  // One at a time: each build already uses every core, and the cold times stay readable.
  for (const piece of missing) await buildPiece(piece, onProgress);
  const [runc, containerd, cniPlugins, lpp, coredns, kube] = pieces.map((p) => p.dir) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return {
    runc: join(runc, "runc"),
    containerd: join(containerd, "containerd"),
    containerdShim: join(containerd, "containerd-shim-runc-v2"),
    ctr: join(containerd, "ctr"),
    cniBinDir: cniPlugins,
    kubelet: join(kube, "kubelet"),
    kubeProxy: join(kube, "kube-proxy"),
    kubeScheduler: join(kube, "kube-scheduler"),
    kubectl: join(kube, "kubectl"),
    coredns: join(coredns, "coredns"),
    localPathProvisioner: join(lpp, "local-path-provisioner"),
  };
}

async function buildPiece(piece: Piece, onProgress: (line: string) => void): Promise<void> {
  onProgress(`building ${piece.label} into ${piece.dir}`);
  const started = Date.now();
  await populateAtomically(piece.dir, async (scratch) => {
    await piece.build(scratch, onProgress);
    for (const file of piece.files) {
      if (!(await exists(join(scratch, file))))
        throw new Error(`building ${piece.label} produced no ${file}`);
    }
  });
  onProgress(`built ${piece.label} in ${formatDuration(Date.now() - started)}`);
}

/** A build glue module's identity: its go.mod, go.sum and Go sources. */
async function moduleHash(dir: string): Promise<string> {
  const files = (await listFiles(dir)).filter((f) => /(\.go|go\.mod|go\.sum)$/.test(f));
  return hashFiles(
    dir,
    files.map((f) => relative(dir, f)),
  );
}
