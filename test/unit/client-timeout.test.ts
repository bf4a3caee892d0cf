import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { CONFIGMAP } from "../../src/runtime/builtin-types.js";
import { KubeClient } from "../../src/runtime/client.js";

describe("KubeClient on a connection that goes silent", () => {
  it("fails the request instead of hanging", async () => {
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
      const started = Date.now();
      await assert.rejects(
        client.request({ method: "GET", path: client.resourcePath(CONFIGMAP, "ns"), idleTimeoutMs: 300 }),
        /no answer for 300 ms/,
      );
      assert.ok(Date.now() - started < 3000);
    } finally {
      client.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
