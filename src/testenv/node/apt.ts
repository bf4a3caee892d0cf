import { runCommand } from "../exec.js";

/** Installs the Debian packages that are missing (dpkg says which), with one apt-get run. */
export async function ensureAptPackages(
  packages: readonly string[],
  onProgress: (line: string) => void,
): Promise<void> {
  const missing: string[] = [];
  for (const pkg of packages) {
    const installed = await runCommand("dpkg-query", ["-W", "-f=$" + "{Status}", pkg]).then(
      (r) => r.stdout.includes("install ok installed"),
      () => false,
    );
    if (!installed) missing.push(pkg);
  }
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`the node needs Debian packages ${missing.join(", ")}: run apt-get install as root`);
  }
  onProgress(`apt-get install -y ${missing.join(" ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  await runCommand("apt-get", ["update"], { env });
  await runCommand("apt-get", ["install", "-y", "--no-install-recommends", ...missing], { env });
}
