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

/** A loopback port free right now; the usual small race with other processes is accepted. */
export async function freePort(): Promise<number> {
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
