import { join } from "node:path";
import { freePort, LOOPBACK } from "./ports.js";
import { type ServiceProcess, startService, stopIfFailing } from "./processes.js";
import { waitUntil } from "./wait.js";

export interface Etcd {
  clientUrl: string;
  service: ServiceProcess;
}

/** A single-member etcd on loopback, data in `<dir>/etcd`. */
export async function startEtcd(binary: string, dir: string): Promise<Etcd> {
  const clientUrl = `http://${LOOPBACK}:${await freePort()}`;
  const peerUrl = `http://${LOOPBACK}:${await freePort()}`;
  const service = await startService({
    name: "etcd",
    command: binary,
    args: [
      "--name=testenv",
      `--data-dir=${join(dir, "etcd")}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=testenv=${peerUrl}`,
      // Durability across a power cut is worthless for throwaway data; fsync would dominate test time.
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
    logPath: join(dir, "etcd.log"),
    cwd: dir,
  });
  const healthy = waitUntil(
    async () => {
      const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(2000) });
      return res.ok && ((await res.json()) as { health?: string }).health === "true";
    },
    { what: "etcd /health", timeoutMs: 20_000, service },
  );
  await stopIfFailing(service, healthy);
  return { clientUrl, service };
}
