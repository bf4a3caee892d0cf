import type { NodeNamespace } from "./node.js";
import { poll } from "./openbao-operator.js";

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

/**
 * Reads of one OpenBaoCluster on the node, as the node tests make them. `ctx` and `token` are
 * getters: suites fill them in their before() hook, after these helpers are made.
 */
export function clusterProbe(ctx: () => NodeNamespace, name: string, token: () => string) {
  const selector = `openbao.org/cluster=${name},openbao.org/component=server`;
  const cluster = (): Promise<Json> => ctx().getJson(`openbaocluster/${name}`);
  const condition = async (type: string): Promise<Json | undefined> =>
    (await cluster()).status?.conditions?.find((c: Json) => c.type === type);
  return {
    selector,
    cluster,
    condition,
    /** The voter pods of every revision. */
    voterPods: async (): Promise<Json[]> =>
      JSON.parse(await ctx().kubectl(["get", "pods", "-l", selector, "-o", "json"])).items,
    /** A `bao` command line run in `pod` with the token exported (never on the command line). */
    bao: (command: string, pod = `${name}-0`) =>
      ctx().kubectl(["exec", pod, "--", "sh", "-c", `export BAO_TOKEN=${token()}; ${command}`]),
    /** Waits for condition `type` to carry `reason` and returns it. */
    waitCondition: (type: string, reason: string, timeoutMs: number) =>
      poll(
        async () => {
          const c = await condition(type).catch(() => undefined);
          return c?.reason === reason ? c : undefined;
        },
        timeoutMs,
        `${type} ${reason}`,
        1000,
      ),
  };
}
