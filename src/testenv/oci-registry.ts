import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DebianProgram, ensureDebianProgram } from "./debian-package.js";
import { freePort, LOOPBACK } from "./ports.js";
import { type ServiceProcess, startService, stopIfFailing } from "./processes.js";
import { waitUntil } from "./wait.js";

// A real OCI registry on loopback for the image-signing test: Debian bookworm's `docker-registry`,
// the CNCF distribution registry 2.8.2, the implementation most registries grew from. cosign stores
// signatures and attestations in it as it would in any registry.
export const DOCKER_REGISTRY: DebianProgram = {
  package: "docker-registry",
  version: "2.8.2+ds1-1",
  release: "bookworm",
  pool: "pool/main/d/docker-registry/docker-registry_2.8.2+ds1-1_amd64.deb",
  sha256: "a9bd06c0e006854608f8469b4371743f40604ad90975532bb3b7ceeb72fe2913",
  binary: "usr/bin/docker-registry",
};

export interface OciRegistry {
  /** host:port, as image references name it (from where the test runs). */
  host: string;
  port: number;
  /** http://host:port */
  url: string;
  service: ServiceProcess;
  stop(): Promise<void>;
}

let pending: Promise<string> | undefined;

/** The cached `docker-registry` binary, fetched once. */
export function ensureOciRegistry(onProgress: (line: string) => void = () => {}): Promise<string> {
  if (!pending) {
    pending = ensureDebianProgram(DOCKER_REGISTRY, onProgress);
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending;
}

export interface OciRegistryPlace {
  /** Wraps the registry's argv: runs it elsewhere, e.g. inside the local node's network namespace. */
  wrap(argv: string[]): string[];
  /** The address it listens on there. */
  listen: string;
  /** The address the test reaches that listener at. */
  reachAt: string;
}

/**
 * Starts a registry on 127.0.0.1 (or in `place`) with its storage and log under `dir`: plain HTTP,
 * no auth, deletes allowed; ready once /v2/ answers.
 */
export async function startOciRegistry(dir: string, place?: OciRegistryPlace): Promise<OciRegistry> {
  const binary = await ensureOciRegistry();
  const port = await freePort();
  const host = `${place?.reachAt ?? LOOPBACK}:${port}`;
  const config = join(dir, "registry.yml");
  mkdirSync(join(dir, "storage"), { recursive: true });
  // JSON is YAML: the registry reads this as its config file.
  writeFileSync(
    config,
    JSON.stringify({
      version: 0.1,
      log: { level: "warn", accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: join(dir, "storage") }, delete: { enabled: true } },
      http: { addr: `${place?.listen ?? LOOPBACK}:${port}` },
    }),
  );
  const [command, ...args] = place ? place.wrap([binary, "serve", config]) : [binary, "serve", config];
  const service = await startService({
    name: "docker-registry",
    command: command!,
    args,
    logPath: join(dir, "registry.log"),
    cwd: dir,
  });
  const url = `http://${host}`;
  const ready = waitUntil(
    async () => (await fetch(`${url}/v2/`, { signal: AbortSignal.timeout(2000) })).status === 200,
    { what: "the registry's /v2/", timeoutMs: 20_000, service },
  );
  await stopIfFailing(service, ready);
  return { host, port, url, service, stop: () => service.stop() };
}
