/** `npm run manifests`: writes deploy/install.yaml from the chart (see install-manifest.ts). */
import { writeFileSync } from "node:fs";
import { ensureHelm } from "../testenv/helm.js";
import { INSTALL_MANIFEST_FILE, renderInstallManifest } from "./install-manifest.js";

const target = process.argv[2] ?? INSTALL_MANIFEST_FILE;
writeFileSync(
  target,
  await renderInstallManifest(await ensureHelm((line) => process.stderr.write(`${line}\n`))),
);
process.stdout.write(`wrote ${target}\n`);
