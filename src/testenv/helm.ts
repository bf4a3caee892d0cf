import { join } from "node:path";
import { exists, populateAtomically } from "./atomic.js";
import { cacheRoot } from "./cache.js";
import { formatDuration } from "./duration.js";
import { runGo } from "./node/gotool.js";

/** Pinned Helm; the operator renders the GitLab chart with this binary under test. */
export const HELM_VERSION = "v3.22.0";
const HELM_MODULE = "helm.sh/helm/v3";

// `go install module@version` leaves `helm version` at the source default; the release build stamps
// the version through this variable, and stamping it keeps the binary honest about what it is.
const LDFLAGS = `-s -w -X ${HELM_MODULE}/internal/version.version=${HELM_VERSION}`;

export function helmCacheDir(): string {
  return join(cacheRoot(), `helm-${HELM_VERSION}`);
}

let pending: Promise<string> | undefined;

/**
 * The path of the cached `helm`, building it from its published Go module when missing (one build
 * per process; a cold build takes a few minutes on two cores, a warm check is one stat).
 */
export function ensureHelm(onProgress: (line: string) => void = () => {}): Promise<string> {
  if (!pending) {
    pending = build(onProgress);
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending;
}

async function build(onProgress: (line: string) => void): Promise<string> {
  const dir = helmCacheDir();
  const binary = join(dir, "helm");
  if (await exists(binary)) return binary;
  onProgress(`building helm ${HELM_VERSION} into ${dir} (cold: a few minutes on 2 cores)`);
  const started = Date.now();
  await populateAtomically(dir, async (scratch) => {
    await runGo({
      label: `helm ${HELM_VERSION}`,
      args: [
        "install",
        "-v",
        "-trimpath",
        "-buildvcs=false",
        `-ldflags=${LDFLAGS}`,
        `${HELM_MODULE}/cmd/helm@${HELM_VERSION}`,
      ],
      cwd: cacheRoot(),
      // Static: nothing in helm needs cgo, and a static binary can go into an image as it is.
      env: { CGO_ENABLED: "0", GOBIN: scratch },
      onProgress,
    });
    if (!(await exists(join(scratch, "helm"))))
      throw new Error(`building helm ${HELM_VERSION} produced no helm`);
  });
  onProgress(`built helm ${HELM_VERSION} in ${formatDuration(Date.now() - started)}`);
  return binary;
}
