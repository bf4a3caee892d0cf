import { commandWorks, runCommand } from "./exec.js";

export const OPENSSL = "openssl";

/** Makes sure the openssl CLI exists, installing it with apt-get on a fresh Debian-like machine. */
export async function ensureOpenssl(onProgress: (line: string) => void = () => {}): Promise<void> {
  if (await commandWorks(OPENSSL, ["version"])) return;
  if (!(await commandWorks("apt-get", ["--version"]))) {
    throw new Error("openssl is missing and apt-get is not available: install the openssl CLI");
  }
  if (process.getuid?.() !== 0) {
    throw new Error("openssl is missing: run `sudo apt-get install -y openssl` (needs root)");
  }
  onProgress("openssl missing: apt-get install -y openssl");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  await runCommand("apt-get", ["update"], { env });
  await runCommand("apt-get", ["install", "-y", "--no-install-recommends", "openssl"], { env });
}
