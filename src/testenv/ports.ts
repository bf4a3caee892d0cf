import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

export const LOOPBACK = "127.0.0.1";

/** Binds `port` on loopback and releases it; 0 asks the kernel for any free one. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen({ host: LOOPBACK, port, exclusive: true }, () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * The kernel hands out the ports of outgoing connections from this range, so a listener that takes
 * a port from it some time after the port was picked (a bao or kube-apiserver still starting) can
 * lose it to any client in between.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

const FIRST = 10_000;

/**
 * A loopback port free right now, picked below the ephemeral range, where no outgoing connection
 * takes it before its listener binds; another picker taking the same one at random is the small race
 * left. The kernel's own choice when none of those is free.
 */
export async function freePort(): Promise<number> {
  const span = ephemeralLow() - FIRST;
  for (let attempt = 0; span > 0 && attempt < 20; attempt++) {
    const candidate = FIRST + randomInt(span);
    if ((await probe(candidate)) !== undefined) return candidate;
  }
  const port = await probe(0);
  if (port === undefined) throw new Error("no free loopback port");
  return port;
}

export async function portIsFree(port: number): Promise<boolean> {
  return (await probe(port)) !== undefined;
}

/** A free port whose successor is free too (OpenBao dev mode puts its cluster listener on port+1). */
export async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await freePort();
    if (port < 65535 && (await portIsFree(port + 1))) return port;
  }
  throw new Error("no pair of adjacent free loopback ports");
}
