import { createHash } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { exists, populateAtomically } from "../../atomic.js";
import { cacheRoot } from "../../cache.js";
import { runCommand } from "../../exec.js";
import { ensurePackagedFixtureCharts } from "../../gitlab-charts.js";
import { ensureHelm } from "../../helm.js";
import { ensureOperatorNode } from "../../lts-node.js";
import { repoRoot } from "../../paths.js";

export const OPERATOR_IMAGE = "localhost/platform-operator:dev";
const APP_USER = NONROOT;
/** Where the image keeps helm and the bundled charts; the gitlab target reads both from its environment. */
export const IMAGE_HELM = "/usr/local/bin/helm";
export const IMAGE_CHARTS_DIR = "/app/charts";

/**
 * The image's environment, the Dockerfile's ENV alike. It carries the runtime environment the chart
 * sets (RUNTIME_ENV in src/cli/heap.ts: one malloc arena; testenv imports no other layer, so
 * image-runtime-env.test.ts holds the two equal), so the image started some other way (docker run,
 * another chart) runs the way it was measured.
 */
export const OPERATOR_IMAGE_ENV: string[] = [
  "PATH=/usr/local/bin:/usr/bin:/bin",
  "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
  "NODE_ENV=production",
  `HELM_BINARY=${IMAGE_HELM}`,
  `HELM_CHARTS=${IMAGE_CHARTS_DIR}`,
  "MALLOC_ARENA_MAX=1",
];

import type { ImageSpec } from "./archive.js";
import { distrolessEntries, ensureDistrolessRoot, NONROOT } from "./distroless.js";
import { dir, hostFile } from "./rootfs.js";
import type { TarEntry } from "./tar.js";

/** Production node_modules for the working tree's lock file, installed once per lock file. */
export async function ensureProductionModules(onProgress: (line: string) => void): Promise<string> {
  const root = repoRoot();
  const hash = createHash("sha256");
  for (const f of ["package.json", "package-lock.json"]) hash.update(readFileSync(join(root, f)));
  const target = join(cacheRoot(), `operator-modules-${hash.digest("hex").slice(0, 12)}`);
  if (!(await exists(target))) {
    onProgress("installing the operator's production node_modules (npm ci --omit=dev)");
    await populateAtomically(target, async (scratch) => {
      for (const f of ["package.json", "package-lock.json"]) cpSync(join(root, f), join(scratch, f));
      await runCommand("npm", ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"], {
        cwd: scratch,
      });
    });
  }
  return join(target, "node_modules");
}

/** Every file under `from` as an image entry under `to`, owned by root and read-only for others. */
export function treeEntries(
  from: string,
  to: string,
  filter: (path: string) => boolean = () => true,
): TarEntry[] {
  const entries: TarEntry[] = [dir(to)];
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(current, entry.name);
      if (!filter(path)) continue;
      const inImage = join(to, relative(from, path));
      if (entry.isDirectory()) {
        entries.push(dir(inImage));
        walk(path);
      } else if (entry.isFile()) {
        const mode = statSync(path).mode & 0o111 ? 0o755 : 0o644;
        entries.push({ type: "file", path: inImage, mode, source: path, size: statSync(path).size });
      }
    }
  };
  walk(from);
  return entries;
}

/**
 * The operator image from the working tree, on a distroless base (no shell, no package manager,
 * see distroless.ts): the base with Node, then production node_modules,
 * then helm and the bundled charts (the gitlab target renders with them), then the compiled code.
 * Only the last layer changes with an edit, so a rebuild takes seconds. The bundled charts are the
 * fixture GitLab charts, packaged: the real chart is not available here (the Dockerfile says how a
 * real build bundles it).
 */
export async function operatorImageSpec(onProgress: (line: string) => void): Promise<ImageSpec> {
  const root = repoRoot();
  const compiled = join(root, "dist", "src");
  if (!existsSync(join(compiled, "cli", "main.js"))) {
    throw new Error(
      `${compiled}/cli/main.js is missing: run \`npm run build\` before building the operator image`,
    );
  }
  const [base, node, modules, helm, charts] = await Promise.all([
    ensureDistrolessRoot(onProgress),
    ensureOperatorNode(onProgress),
    ensureProductionModules(onProgress),
    ensureHelm(onProgress),
    ensurePackagedFixtureCharts(onProgress),
  ]);
  const noMaps = (p: string) => !p.endsWith(".map");
  return {
    name: "operator",
    tags: [OPERATOR_IMAGE],
    layers: [
      [...distrolessEntries(base, node), hostFile("/usr/local/bin/node", node)],
      [dir("/app"), ...treeEntries(modules, "/app/node_modules")],
      // helm is static (built with CGO_ENABLED=0), so it needs no libraries beside it.
      [hostFile(IMAGE_HELM, helm), ...treeEntries(charts, IMAGE_CHARTS_DIR)],
      [
        ...treeEntries(compiled, "/app/dist/src", noMaps),
        hostFile("/app/package.json", join(root, "package.json"), 0o644),
        ...treeEntries(join(root, "deploy"), "/app/deploy"),
      ],
    ],
    config: {
      Entrypoint: ["/usr/local/bin/node", "/app/dist/src/cli/main.js"],
      User: `${APP_USER.uid}:${APP_USER.gid}`,
      WorkingDir: "/app",
      Env: OPERATOR_IMAGE_ENV,
    },
  };
}
