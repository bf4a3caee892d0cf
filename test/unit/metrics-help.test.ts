import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Controller, requeueAfter } from "../../src/runtime/controller.js";
import { silentLogger } from "../../src/runtime/log.js";
import { reconcileTotal } from "../../src/runtime/metrics.js";

/** The values a help text promises, from its parenthesised list. */
const promised = (help: string): string[] => /\(([^)]*)\)/.exec(help)![1]!.split(/,\s*/);

describe("metric help texts promise only values that are emitted", () => {
  it("controller_runtime_reconcile_total: every result the help names occurs, and no other", {
    timeout: 30_000,
  }, async () => {
    const name = "help-check";
    let calls = 0;
    const c = new Controller({
      name,
      log: silentLogger(),
      baseDelayMs: 1,
      reconcile: async (key) => {
        calls++;
        if (key === "fails" && calls < 10) throw new Error("once");
        if (key === "later") return requeueAfter(60_000);
        return undefined;
      },
    });
    c.start();
    for (const k of ["ok", "fails", "later"]) c.queue.add(k);
    const results = async () =>
      new Set(
        (await reconcileTotal.get()).values
          .filter((v) => v.labels["controller"] === name && v.value > 0)
          .map((v) => String(v.labels["result"])),
      );
    // Wait on the counter itself: each result appears once its reconcile ran.
    while ((await results()).size < 3) await new Promise((r) => setImmediate(r));
    await c.stop();
    const help = (await reconcileTotal.get()).help;
    assert.deepEqual([...(await results())].sort(), promised(help).sort());
  });
});
