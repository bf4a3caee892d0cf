import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join, normalize, sep } from "node:path";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureGpg, GPG } from "../../src/testenv/gpg.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { createCa, issueCertificate } from "../../src/testenv/pki.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";

// Fixture GitLab charts, a PGP signing key, and a loopback chart repository serving them, all made
// in test set-up from test/fixtures/charts/gitlab (see versions.yaml there for what each version does).

import { type FixtureVersion, writeFixtureCharts } from "../../src/testenv/gitlab-charts.js";

export { type FixtureVersion, fixtureVersions, writeFixtureCharts } from "../../src/testenv/gitlab-charts.js";

export interface SigningKey {
  /** The name helm's --key matches against the key's identity. */
  name: string;
  /** Legacy secret keyring (what `helm package --sign --keyring` reads). */
  secring: string;
  /** Public keyring (what `helm verify --keyring` and DYNAMIC_CHART_KEYRING take). */
  pubring: string;
  /** The public key ASCII-armored (`gpg --export --armor`): what the operator chart's trustedKeys take. */
  armored: string;
  /** The secret key ASCII-armored: what must never be taken as a trusted key. */
  secretArmored: string;
}

/**
 * A fresh RSA signing key made with the system's gpg in a private GNUPGHOME, exported as the legacy
 * keyrings helm reads (gpg 2.1+ keeps keys in its own store, so both files are exports). No
 * passphrase: it only ever signs fixtures.
 */
export async function createSigningKey(dir: string, name: string): Promise<SigningKey> {
  await ensureGpg();
  const home = join(dir, `gnupg-${name.replace(/\W+/g, "-")}`);
  await mkdir(home, { recursive: true, mode: 0o700 });
  const env = { ...process.env, GNUPGHOME: home };
  const gpg = (args: string[]) =>
    runCommand(GPG, ["--batch", "--pinentry-mode", "loopback", "--passphrase", "", ...args], { env });
  try {
    await gpg([
      "--quick-generate-key",
      `${name} <${name.toLowerCase().replace(/\W+/g, ".")}@fixtures.test>`,
      "rsa2048",
      "sign",
      "never",
    ]);
    const secring = join(dir, `${name.replace(/\W+/g, "-")}.secring.gpg`);
    const pubring = join(dir, `${name.replace(/\W+/g, "-")}.pubring.gpg`);
    await gpg(["--output", secring, "--export-secret-keys"]);
    await gpg(["--output", pubring, "--export"]);
    const armored = (await gpg(["--export", "--armor"])).stdout;
    const secretArmored = (await gpg(["--export-secret-keys", "--armor"])).stdout;
    return { name, secring, pubring, armored, secretArmored };
  } finally {
    // gpg started an agent for this home; it must not outlive the test.
    await runCommand("gpgconf", ["--kill", "gpg-agent"], { env }).catch(() => {});
  }
}

/**
 * `helm package` of each chart folder into `out`, signed with `key` when given (which writes the
 * `.prov` next to each archive). Returns the archive paths.
 */
export async function packageCharts(chartDirs: string[], out: string, key?: SigningKey): Promise<string[]> {
  const helm = await ensureHelm();
  await mkdir(out, { recursive: true });
  const archives: string[] = [];
  for (const dir of chartDirs) {
    const sign = key ? ["--sign", "--key", key.name, "--keyring", key.secring] : [];
    const { stdout } = await runCommand(helm, ["package", dir, "--destination", out, ...sign], {
      env: helmEnv(out),
    });
    const path = /saved it to: (\S+)/.exec(stdout)?.[1];
    if (!path) throw new Error(`helm package ${dir} did not say where it saved the chart:\n${stdout}`);
    archives.push(path);
  }
  return archives;
}

/** `helm repo index` over a folder of archives (relative URLs, as a plain static repository serves). */
export async function indexRepository(dir: string): Promise<void> {
  const helm = await ensureHelm();
  await runCommand(helm, ["repo", "index", dir], { env: helmEnv(dir) });
}

function helmEnv(dir: string): NodeJS.ProcessEnv {
  const home = join(dir, ".helm-home");
  return {
    PATH: process.env["PATH"],
    HOME: home,
    HELM_CONFIG_HOME: join(home, "config"),
    HELM_CACHE_HOME: join(home, "cache"),
    HELM_DATA_HOME: join(home, "data"),
  };
}

export interface ChartRepoServer {
  /** Base URL of the repository (ends with /). */
  url: string;
  /** The CA that signed the HTTPS server's certificate (PEM and file), for DYNAMIC_CHART_CA_FILE. */
  caPem: string;
  caFile: string;
  /** Paths served, one entry per request, in order. */
  requests: string[];
  stop(): Promise<void>;
}

/**
 * Serves the files of `root` on 127.0.0.1 (HTTPS with a throwaway CA, or plain HTTP when asked).
 * Only GET of plain files under root; anything else is 404.
 */
export async function startChartRepo(
  root: string,
  opts: { protocol?: "https" | "http" } = {},
): Promise<ChartRepoServer> {
  const pki = makeTempDir("chart-repo-pki");
  await createCa(pki, "/CN=platform-operator-chart-repo-ca");
  await issueCertificate(pki, "repo", "/CN=chart-repo", [
    "subjectAltName=IP:127.0.0.1,DNS:localhost",
    "extendedKeyUsage=serverAuth",
  ]);
  const caPem = await readFile(join(pki, "ca.crt"), "utf8");
  const requests: string[] = [];
  const handler: http.RequestListener = (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    requests.push(path);
    const file = normalize(join(root, path));
    if (req.method !== "GET" || !file.startsWith(root + sep) || path.includes("/.")) {
      res.writeHead(404).end();
      return;
    }
    readFile(file).then(
      (body) => {
        res.writeHead(200, { "content-length": body.length }).end(body);
      },
      () => res.writeHead(404).end(),
    );
  };
  const server =
    opts.protocol === "http"
      ? http.createServer(handler)
      : https.createServer(
          { cert: await readFile(join(pki, "repo.crt")), key: await readFile(join(pki, "repo.key")) },
          handler,
        );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${opts.protocol === "http" ? "http" : "https"}://127.0.0.1:${port}/`,
    caPem,
    caFile: join(pki, "ca.crt"),
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      removeTempDir(pki);
    },
  };
}

export interface FixtureRepository {
  /** Folder with `gitlab/<version>/` chart folders (HELM_CHARTS layout). */
  chartsDir: string;
  /** Folder with signed `gitlab-<version>.tgz` + `.prov` and index.yaml (the served repository). */
  repoDir: string;
  key: SigningKey;
  /** A second key that signed nothing in the repository: a keyring of it must refuse every chart. */
  otherKey: SigningKey;
  versions: FixtureVersion[];
  dir: string;
  cleanup(): Promise<void>;
}

/** Every fixture chart written, packaged, signed and indexed, in one temp folder. */
export async function buildFixtureRepository(only?: readonly string[]): Promise<FixtureRepository> {
  const dir = makeTempDir("gitlab-charts");
  const chartsDir = join(dir, "charts");
  const repoDir = join(dir, "repo");
  const versions = await writeFixtureCharts(chartsDir, only);
  const key = await createSigningKey(dir, "Fixture Chart Signer");
  const otherKey = await createSigningKey(dir, "Someone Else");
  await packageCharts(
    versions.map((v) => join(chartsDir, "gitlab", v.version)),
    repoDir,
    key,
  );
  await indexRepository(repoDir);
  await rm(join(repoDir, ".helm-home"), { recursive: true, force: true });
  return {
    chartsDir,
    repoDir,
    key,
    otherKey,
    versions,
    dir,
    async cleanup() {
      removeTempDir(dir);
    },
  };
}

/** Names of the files in a folder, for assertions. */
export async function filesIn(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).sort();
}
