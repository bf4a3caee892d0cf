import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type DebianProgram, ensureDebianProgram } from "./debian-package.js";
import { type CommandResult, runCommand } from "./exec.js";

// cosign, which signs and verifies the operator image in the tests, is Debian trixie's build of
// cosign 2.5.0 (Go 1.24), not one built from its Go module: that build took ~37 minutes on the
// shared 2-core machine, more than a cold CI run can spend on one test tool, and the .deb is 15 MB.
// The pin is the Packages index's Filename and SHA256 of that build.
export const COSIGN: DebianProgram = {
  package: "cosign",
  version: "2.5.0-2+b5",
  release: "trixie",
  pool: "pool/main/c/cosign/cosign_2.5.0-2+b5_amd64.deb",
  sha256: "3b6eadd27f3c4c00bfa7eab5c2397a6a15a763630c7a1d40d06ff60d24799eef",
  binary: "usr/bin/cosign",
};

let pending: Promise<string> | undefined;

/** The cached `cosign` binary, fetched once (a warm check is one stat). */
export function ensureCosign(onProgress: (line: string) => void = () => {}): Promise<string> {
  if (!pending) {
    pending = ensureDebianProgram(COSIGN, onProgress);
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending;
}

/** A port nothing listens on: any request cosign would send beyond loopback fails at once. */
export const DEAD_PROXY = "http://127.0.0.1:9";

/**
 * The environment for a cosign that cannot reach anything but loopback: every proxy variable names a
 * dead port (Go sends loopback requests direct, everything else through the proxy), its home, TUF
 * root and docker config are private folders under `home`, so no Sigstore trust root, cached
 * credential or public-good service is read or asked. `password` encrypts the private key; `proxy`
 * may be a loopback listener of the caller's that counts what tried to leave.
 */
export function offlineCosignEnv(home: string, password: string, proxy = DEAD_PROXY): NodeJS.ProcessEnv {
  for (const d of ["tuf", "docker"]) mkdirSync(join(home, d), { recursive: true });
  return {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: home,
    TUF_ROOT: join(home, "tuf"),
    DOCKER_CONFIG: join(home, "docker"),
    HTTPS_PROXY: proxy,
    HTTP_PROXY: proxy,
    https_proxy: proxy,
    http_proxy: proxy,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    COSIGN_PASSWORD: password,
  };
}

/** Runs cosign in `env`, from `cwd` (where generate-key-pair writes cosign.key and cosign.pub). */
export async function runCosign(
  args: string[],
  opts: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<CommandResult> {
  return runCommand(await ensureCosign(), args, opts);
}
