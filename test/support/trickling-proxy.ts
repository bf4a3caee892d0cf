import type { SharedNode } from "../../src/testenv/node/shared.js";
import { startNodeScript } from "./node-script.js";

/**
 * A TCP proxy inside the node's network in front of a real server, that can make the answers to
 * one client address crawl: once `stick(ip)` is called, every byte the server sends to that address
 * (on connections open now or later) is held and passed on one byte every `dripMs`. The client sees
 * a live connection that never goes idle long enough to time out, so a request to it never ends: a
 * pass that never ends, the way a stuck path to a backend (a middlebox, an overloaded server
 * streaming its answer) makes one. Other clients are served as usual. `stuckAnswers()` counts the
 * answers it started to hold, so a test can prove the stall it sees came from here.
 */
export interface TricklingProxy {
  /** host:port pods can reach (the node's own address). */
  address: string;
  stick(ip: string): void;
  stuckAnswers(ip: string): number;
  stop(): Promise<void>;
}

export async function startTricklingProxy(
  node: SharedNode,
  upstream: string,
  dripMs: number,
): Promise<TricklingProxy> {
  const host = node.addresses.nodeIp;
  const [upHost, upPort] = upstream.replace(/^https?:\/\//, "").split(":");
  const script = `
const net = require("net");
const stuck = new Set();
const held = new Set();
require("readline").createInterface({ input: process.stdin }).on("line", (l) => {
  const m = /^stick (\\S+)$/.exec(l);
  if (m) { stuck.add(m[1]); process.stdout.write("sticking " + m[1] + "\\n"); }
});
setInterval(() => {
  for (const p of held) if (p.queue.length && !p.c.destroyed) p.c.write(p.queue.shift());
}, ${dripMs});
const s = net.createServer((c) => {
  const ip = (c.remoteAddress || "").replace(/^::ffff:/, "");
  const u = net.connect(${Number(upPort)}, ${JSON.stringify(upHost)});
  const p = { c, queue: [] };
  const end = () => { held.delete(p); c.destroy(); u.destroy(); };
  c.on("data", (d) => u.write(d));
  u.on("data", (d) => {
    if (!stuck.has(ip)) return c.write(d);
    if (!held.has(p) || p.queue.length === 0) process.stdout.write("stuck " + ip + "\\n");
    held.add(p);
    for (const b of d) p.queue.push(Buffer.from([b]));
  });
  for (const x of [c, u]) { x.on("error", end); x.on("close", end); }
});
s.listen(0, ${JSON.stringify(host)}, () => process.stdout.write("port " + s.address().port + "\\n"));
`;
  const proxy = await startNodeScript(node, "trickling proxy", script);
  return {
    address: proxy.address,
    stick: (ip) => proxy.send(`stick ${ip}`),
    stuckAnswers: (ip) =>
      proxy
        .output()
        .split("\n")
        .filter((l) => l === `stuck ${ip}`).length,
    stop: proxy.stop,
  };
}
