import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { createSigningKey, packageCharts, type SigningKey } from "../support/chart-repo.js";

// The operator's chart as it is published: `helm package --sign` with a PGP key, and `helm verify`
// against the public keyring, on the real helm; an archive changed after signing is refused.

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));

describe("the chart, packaged and signed", () => {
  let helm: string;
  let dir: string;
  let key: SigningKey;
  let archive: string;
  let other: SigningKey;

  before(async () => {
    helm = await ensureHelm();
    dir = makeTempDir("chart-package");
    key = await createSigningKey(dir, "Platform Operator Release");
    other = await createSigningKey(dir, "Someone Else");
    [archive] = (await packageCharts([CHART], join(dir, "out"), key)) as [string];
  });

  it("is verified by helm verify with the signer's public key", async () => {
    const chart = parse(readFileSync(join(CHART, "Chart.yaml"), "utf8")) as { version: string };
    assert.equal(archive, join(dir, "out", `platform-operator-${chart.version}.tgz`));
    const { stdout, stderr } = await runCommand(helm, ["verify", archive, "--keyring", key.pubring]);
    assert.match(stdout + stderr, /Signed by: Platform Operator Release/);
    // The .prov names the archive's digest; the archive holds the CRDs, NOTES.txt and the Argo CD scripts.
    const prov = readFileSync(`${archive}.prov`, "utf8");
    assert.match(prov, /platform-operator-\d+\.\d+\.\d+\.tgz: sha256:[0-9a-f]{64}/);
    const { stdout: listing } = await runCommand("tar", ["-tzf", archive]);
    for (const file of [
      "platform-operator/templates/NOTES.txt",
      "platform-operator/crds/ohmlab.fr_vaultseeds.yaml",
      "platform-operator/argocd/ohmlab.fr_VaultSeed/health.lua",
      "platform-operator/argocd/openbao.org_OpenBaoCluster/actions/backup-now/action.lua",
    ])
      assert.ok(listing.split("\n").includes(file), `${file} is in the archive`);
  });

  it("is refused with another key, and once the archive changes after signing", async () => {
    await assert.rejects(
      runCommand(helm, ["verify", archive, "--keyring", other.pubring]),
      /verify failed|openpgp/i,
    );
    const changed = join(dir, "out", "changed", basename(archive));
    await runCommand("mkdir", ["-p", join(dir, "out", "changed")]);
    const bytes = readFileSync(archive);
    // One more byte after the gzip stream: the archive still unpacks, its digest no longer matches.
    writeFileSync(changed, Buffer.concat([bytes, Buffer.from([0])]));
    writeFileSync(`${changed}.prov`, readFileSync(`${archive}.prov`));
    await assert.rejects(
      runCommand(helm, ["verify", changed, "--keyring", key.pubring]),
      /sha256 sum does not match|digest/i,
    );
  });
});
