import { join } from "node:path";
import { exists, populateAtomically } from "./atomic.js";
import { cacheRoot } from "./cache.js";
import { formatDuration } from "./duration.js";
import { runGo } from "./node/gotool.js";

/** Pinned cosign: signs the operator image and its attestations under test, and verifies them offline. */
export const COSIGN_VERSION = "v2.6.5";
const COSIGN_MODULE = "github.com/sigstore/cosign/v2";
// The release build stamps the version here; `cosign version` then says what it is.
const LDFLAGS = `-s -w -X sigs.k8s.io/release-utils/version.gitVersion=${COSIGN_VERSION}`;

let pending: Promise<string> | undefined;

/**
 * The cached `cosign`, built from its published Go module when missing (one build per process; a
 * cold build is long, about as long as helm's twice over, so prepare it before the tests that need it).
 */
export function ensureCosign(onProgress: (line: string) => void = () => {}): Promise<string> {
  if (!pending) {
    pending = build(onProgress);
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending;
}

async function build(onProgress: (line: string) => void): Promise<string> {
  const dir = join(cacheRoot(), `cosign-${COSIGN_VERSION}`);
  const binary = join(dir, "cosign");
  if (await exists(binary)) return binary;
  onProgress(`building cosign ${COSIGN_VERSION} into ${dir} (cold: many minutes on 2 cores)`);
  const started = Date.now();
  await populateAtomically(dir, async (scratch) => {
    await runGo({
      label: `cosign ${COSIGN_VERSION}`,
      args: [
        "install",
        "-v",
        "-trimpath",
        "-buildvcs=false",
        `-ldflags=${LDFLAGS}`,
        `${COSIGN_MODULE}/cmd/cosign@${COSIGN_VERSION}`,
      ],
      cwd: cacheRoot(),
      env: { CGO_ENABLED: "0", GOBIN: scratch },
      onProgress,
    });
    if (!(await exists(join(scratch, "cosign"))))
      throw new Error(`building cosign ${COSIGN_VERSION} produced no cosign`);
  });
  onProgress(`built cosign ${COSIGN_VERSION} in ${formatDuration(Date.now() - started)}`);
  return binary;
}
