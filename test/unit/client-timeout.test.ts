import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import { KubeClient } from "../../src/runtime/client.js";

describe("KubeClient on a connection that goes silent", () => {
  // The test's own timeout catches a hang; the message proves the idle timeout is what fired. No
  // elapsed-time ceiling: a loaded machine may be slow to run the timer, which is not a hang.
  it("fails the request instead of hanging", { timeout: 60_000 }, async () => {
    // Accepts connections and never answers: what a half-dead network path looks like.
    const server = createServer(() => {});
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const client = new KubeClient({
      server: `http://127.0.0.1:${port}`,
      source: "test",
      requestAuth: async () => ({}),
    });
    try {
      await assert.rejects(
        client.request({ method: "GET", path: client.resourcePath(CONFIGMAP, "ns"), idleTimeoutMs: 300 }),
        /no answer for 300 ms/,
      );
    } finally {
      client.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
