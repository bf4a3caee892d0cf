import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startDevOpenBao } from "./baodev.js";
import type { BaoEndpoint } from "./baohttp.js";
import { startControlPlane } from "./controlplane.js";
import { startSharedNode } from "./node/shared.js";

/** Environment variables through which test/run hands its environment to every test file. */
export const SHARED_ENV_VARS = {
  kubeconfig: "TESTENV_KUBECONFIG",
  server: "TESTENV_SERVER",
  caFile: "TESTENV_CA_FILE",
  issuer: "TESTENV_ISSUER",
  baoAddr: "TESTENV_BAO_ADDR",
  baoToken: "TESTENV_BAO_TOKEN",
  baoVersion: "TESTENV_BAO_VERSION",
} as const;

export interface SharedEnv {
  /** Admin (system:masters) kubeconfig of the shared control plane. */
  kubeconfigPath: string;
  server: string;
  caPem: string;
  issuer: string;
  /** The shared dev OpenBao (root token); shaped for configureKubernetesAuth. */
  bao: BaoEndpoint & { version: string };
}

/**
 * The environment test/run started. Shared by every test file, so a test isolates itself in its own
 * namespace (uniqueName) and its own OpenBao paths, and never stops or restarts shared servers.
 */
export function sharedEnv(): SharedEnv {
  const read = (name: string): string => {
    const value = process.env[name];
    if (!value) {
      throw new Error(
        `${name} is not set: this test needs the shared test environment; run it through ` +
          "`node dist/test/run.js [files...]` (npm test), which starts it and sets TESTENV_* variables",
      );
    }
    return value;
  };
  const v = SHARED_ENV_VARS;
  return {
    kubeconfigPath: read(v.kubeconfig),
    server: read(v.server),
    caPem: readFileSync(read(v.caFile), "utf8"),
    issuer: read(v.issuer),
    bao: { addr: read(v.baoAddr), rootToken: read(v.baoToken), version: read(v.baoVersion) },
  };
}

/** A DNS-1123 name unlikely to collide across test files and runs, e.g. "ns-k3x9q2a7". */
export function uniqueName(prefix: string): string {
  const suffix = randomBytes(5).readUIntBE(0, 5).toString(36).padStart(8, "0");
  const base = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63 - suffix.length - 1);
  return base ? `${base}-${suffix}` : `t${suffix}`;
}

export interface RunningSharedEnv {
  variables: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Starts the shared control plane and dev OpenBao side by side, and the shared node in the background
 * (tests that need it wait for it through sharedNode()); used by test/run.
 */
export async function startSharedEnv(log: (line: string) => void): Promise<RunningSharedEnv> {
  const node = startSharedNode(log);
  const [cp, bao] = await Promise.allSettled([startControlPlane({ log }), startDevOpenBao()]);
  if (cp.status === "rejected" || bao.status === "rejected") {
    if (cp.status === "fulfilled") await cp.value.stop();
    if (bao.status === "fulfilled") await bao.value.stop();
    await node.stop();
    throw cp.status === "rejected" ? cp.reason : (bao as PromiseRejectedResult).reason;
  }
  const caFile = join(cp.value.dir, "ca.crt");
  await writeFile(caFile, cp.value.caPem);
  const v = SHARED_ENV_VARS;
  return {
    variables: {
      [v.kubeconfig]: cp.value.kubeconfigPath,
      [v.server]: cp.value.server,
      [v.caFile]: caFile,
      [v.issuer]: cp.value.issuer,
      [v.baoAddr]: bao.value.addr,
      [v.baoToken]: bao.value.rootToken,
      [v.baoVersion]: bao.value.version,
      ...node.variables,
    },
    async stop() {
      await Promise.all([cp.value.stop(), bao.value.stop(), node.stop()]);
    },
  };
}
