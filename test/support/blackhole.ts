import type { NodeNamespace } from "./node.js";
import { startNodeScript } from "./node-script.js";

/**
 * A TCP server inside the node's network that accepts connections and never answers: an object
 * store endpoint that hangs, so a backup Job stays in flight (and holds the lock) for as long as a
 * test needs it.
 */
export interface Blackhole {
  /** host:port pods can reach (the node's own address). */
  address: string;
  stop(): Promise<void>;
}

export async function startBlackhole(ctx: NodeNamespace): Promise<Blackhole> {
  const host = ctx.node.addresses.nodeIp;
  const script =
    "const s=require('net').createServer(()=>{});" +
    `s.listen(0,'${host}',()=>console.log('port '+s.address().port));`;
  const { address, stop } = await startNodeScript(ctx.node, "blackhole", script);
  return { address, stop };
}
