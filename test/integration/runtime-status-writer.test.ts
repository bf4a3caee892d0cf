import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { StatusWriter } from "../../src/runtime/status.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace } from "../support/kube.js";
import { installWidgetCrd, WIDGET } from "../support/widgets.js";

type WidgetStatus = { phase?: string; seen?: number };
type Widget = KubeObject & { status?: WidgetStatus };

describe("runtime status writer against the API server", () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installWidgetCrd(client);
    ns = await freshNamespace(client, "rt-status");
  });
  after(() => client.close());

  const create = (name: string) =>
    client.create<Widget>(WIDGET, {
      apiVersion: `${WIDGET.group}/${WIDGET.version}`,
      kind: WIDGET.kind,
      metadata: { name, namespace: ns },
      spec: { size: 1 },
    });
  const phaseWriter = () =>
    new StatusWriter<WidgetStatus>({
      client,
      type: WIDGET,
      fieldManager: "phase-writer",
      plane: (s) => ({ phase: s?.phase }),
    });
  const rv = async (name: string) => (await client.get<Widget>(WIDGET, name, ns)).metadata.resourceVersion;

  it("writes once; an unchanged status, even from a stale cached copy, makes no request", async () => {
    const w = phaseWriter();
    const created = await create("once");
    const written = await w.write(created, { phase: "Ready" });
    assert.equal(written?.status?.phase, "Ready");
    const after1 = await rv("once");
    assert.equal(written?.metadata.resourceVersion, after1);
    // `created` is the stale copy an informer could still hold: no status at all.
    assert.equal(await w.write(created, { phase: "Ready" }), undefined, "nothing to write");
    assert.equal(await rv("once"), after1, "the object was not written");
  });

  it("a stale cached copy never overwrites the newer status it wrote: planning sees the newer one", async () => {
    const w = phaseWriter();
    const created = await create("stale");
    await w.write(created, { phase: "First" });
    await w.write(w.freshest(`${ns}/stale`, created), { phase: "Second" });
    const seen = w.freshest(`${ns}/stale`, created);
    assert.equal(seen.status?.phase, "Second", "the stale copy is planned from with the newer status");
    const server = await client.get<Widget>(WIDGET, "stale", ns);
    assert.equal(server.status?.phase, "Second");
    // Once the cache has caught up, its copy is the truth again.
    assert.equal(w.freshest(`${ns}/stale`, server), server);
  });

  it("another concern's fields do not make a write look due, and survive this concern's writes", async () => {
    const w = phaseWriter();
    const other = new StatusWriter<WidgetStatus>({
      client,
      type: WIDGET,
      fieldManager: "seen-writer",
      plane: (s) => ({ seen: s?.seen }),
    });
    const created = await create("planes");
    const a = await w.write(created, { phase: "Ready" });
    const b = await other.write(a!, { seen: 7 });
    assert.deepEqual(b?.status, { phase: "Ready", seen: 7 });
    const before = await rv("planes");
    assert.equal(await w.write(b!, { phase: "Ready" }), undefined);
    assert.equal(await rv("planes"), before);
    const c = await w.write(b!, { phase: "Moved" });
    assert.deepEqual(c?.status, { phase: "Moved", seen: 7 }, "the other writer's field is kept");
  });

  it("a write to an object that is gone is no error", async () => {
    const w = phaseWriter();
    const created = await create("gone");
    await client.delete(WIDGET, "gone", ns);
    assert.equal(await w.write(created, { phase: "Ready" }), undefined);
  });
});
