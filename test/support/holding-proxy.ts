import { readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback TCP proxy a test controls, to make a connection go silent the way a broken network
 * path does: the process keeps running, but its bytes stop arriving. TLS passes through untouched.
 *
 * - `hold("all")`: a partition. Bytes on every connection, open or new, are read and dropped.
 * - `hold("open")`: the connections open now go silent; new ones flow normally (a watch whose
 *   TCP path died while the API server is fine).
 * - `hold("open", "buffer")`: as above, but the bytes are kept and `flush()` delivers them late,
 *   as a congested path would.
 */
export class HoldingProxy {
  private readonly pairs = new Set<Pair>();
  private holdingNew = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<HoldingProxy> {
    let proxy: HoldingProxy | undefined;
    const server = createServer((client) => proxy!.accept(client, target));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("proxy: no port");
    proxy = new HoldingProxy(server, address.port);
    return proxy;
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    const upstream = connect(target.port, target.host);
    const pair: Pair = { client, upstream, held: this.holdingNew, queued: [] };
    this.pairs.add(pair);
    const forward = (from: Socket, to: Socket) =>
      from.on("data", (chunk: Buffer) => {
        if (pair.buffer && pair.held) pair.queued.push({ to, chunk });
        else if (!pair.held && !to.destroyed) to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on("error", end);
      s.on("close", end);
    }
  }

  hold(which: "all" | "open", how: "drop" | "buffer" = "drop"): void {
    for (const p of this.pairs) {
      p.held = true;
      p.buffer = how === "buffer";
    }
    this.holdingNew = which === "all";
  }

  /** Delivers what buffered connections kept, and lets them flow again. */
  flush(): void {
    for (const p of this.pairs) {
      if (!p.buffer) continue;
      p.held = false;
      for (const { to, chunk } of p.queued.splice(0)) if (!to.destroyed) to.write(chunk);
    }
  }

  /** Bytes kept by buffered connections, not yet delivered. */
  get bufferedBytes(): number {
    let n = 0;
    for (const p of this.pairs) for (const q of p.queued) n += q.chunk.length;
    return n;
  }

  /** Connections held now that are still open at both ends. */
  get heldConnections(): number {
    return [...this.pairs].filter((p) => p.held).length;
  }

  /** New connections flow again; held ones stay dead (their bytes were dropped). */
  release(): void {
    this.holdingNew = false;
  }

  get openConnections(): number {
    return this.pairs.size;
  }

  async close(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

interface Pair {
  client: Socket;
  upstream: Socket;
  held: boolean;
  buffer?: boolean;
  queued: { to: Socket; chunk: Buffer }[];
}

/** A copy of a kubeconfig (JSON, as the test environment writes them) whose server is the proxy. */
export function kubeconfigThrough(kubeconfigPath: string, proxyPort: number, outPath: string): string {
  const config = JSON.parse(readFileSync(kubeconfigPath, "utf8")) as {
    clusters: { cluster: { server: string } }[];
  };
  for (const c of config.clusters) {
    const url = new URL(c.cluster.server);
    url.host = `127.0.0.1:${proxyPort}`;
    c.cluster.server = url.toString().replace(/\/$/, "");
  }
  writeFileSync(outPath, JSON.stringify(config), { mode: 0o600 });
  return outPath;
}

/** host and port of a kubeconfig's server. */
export function serverOf(kubeconfigPath: string): { host: string; port: number } {
  const config = JSON.parse(readFileSync(kubeconfigPath, "utf8")) as {
    clusters: { cluster: { server: string } }[];
  };
  const url = new URL(config.clusters[0]!.cluster.server);
  return { host: url.hostname, port: Number(url.port || 443) };
}
