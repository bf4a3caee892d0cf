import { commandWorks } from "./exec.js";
import { ensureAptPackages } from "./node/apt.js";

export const GPG = "gpg";

/**
 * Makes sure gpg exists: the tests sign their fixture charts with a key it generates (helm signs
 * with a legacy keyring, which gpg exports). Installed with apt-get on a fresh Debian machine.
 */
export async function ensureGpg(onProgress: (line: string) => void = () => {}): Promise<void> {
  if (await commandWorks(GPG, ["--version"])) return;
  if (!(await commandWorks("apt-get", ["--version"])))
    throw new Error("gpg is missing and apt-get is not available: install GnuPG (the gnupg package)");
  await ensureAptPackages(["gnupg"], onProgress);
}
