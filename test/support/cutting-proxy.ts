import type { NodeNamespace } from "./node.js";
import { startNodeScript } from "./node-script.js";

/**
 * A TCP proxy inside the node's network in front of a real object store, that cuts every connection
 * once more than `afterBytes` have gone upstream on it: the store seen by a client as going away in
 * the middle of a request body. Requests smaller than that (a listing, a HEAD) pass untouched, so
 * the cut lands in the upload of the snapshot itself. `cuts()` counts the connections it cut, so a
 * test can prove the failure it sees came from there.
 */
export interface CuttingProxy {
  /** host:port pods can reach (the node's own address). */
  address: string;
  cuts(): number;
  stop(): Promise<void>;
}

export async function startCuttingProxy(
  ctx: NodeNamespace,
  upstream: string,
  afterBytes: number,
): Promise<CuttingProxy> {
  const host = ctx.node.addresses.nodeIp;
  const [upHost, upPort] = upstream.replace(/^https?:\/\//, "").split(":");
  const script = `
const net = require("net");
const s = net.createServer((c) => {
  const u = net.connect(${Number(upPort)}, ${JSON.stringify(upHost)});
  let sent = 0;
  const end = () => { c.destroy(); u.destroy(); };
  c.on("data", (d) => {
    sent += d.length;
    if (sent > ${afterBytes}) { process.stdout.write("cut\\n"); c.resetAndDestroy(); u.destroy(); return; }
    u.write(d);
  });
  u.on("data", (d) => c.write(d));
  for (const x of [c, u]) { x.on("error", end); x.on("close", end); }
});
s.listen(0, ${JSON.stringify(host)}, () => process.stdout.write("port " + s.address().port + "\\n"));
`;
  const proxy = await startNodeScript(ctx.node, "cutting proxy", script);
  return {
    address: proxy.address,
    cuts: () =>
      proxy
        .output()
        .split("\n")
        .filter((l) => l === "cut").length,
    stop: proxy.stop,
  };
}
