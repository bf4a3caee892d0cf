import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../src/apis/openbaorestore.js";
import { OpenBaoRestoreReason } from "../../src/apis/openbaorestore-names.js";
import type { EventInput } from "../../src/runtime/events.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { BaoRequestError } from "../../src/targets/openbao/baoclient/client.js";
import {
  jobFinishedAt,
  openbaoPodSelector,
  podFacts,
  sealMismatchHint,
} from "../../src/targets/openbao/restore/after-restore.js";
import { olderThan } from "../../src/targets/openbao/restore/after-restore-plan.js";
import { failed } from "../../src/targets/openbao/restore/status.js";
import type { ServiceContext } from "../../src/targets/openbao/services.js";
import { eventType, nextStatus, type PassResult, transitions } from "../../src/targets/openbao/status.js";
import {
  noteRootTokenFailure,
  RootTokenRefusals,
  usableRootToken,
} from "../../src/targets/openbao/steps/root-token.js";

const cluster = (unseal?: OpenBaoCluster["spec"]["unseal"]): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "dst", namespace: "ns", uid: "u", generation: 2 },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, ...(unseal ? { unseal } : {}) },
  }) as OpenBaoCluster;

const pod = (name: string, created: string, deleting = false): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name,
    uid: `uid-${name}`,
    creationTimestamp: created,
    ...(deleting ? { deletionTimestamp: "2026-01-01T00:10:00Z" } : {}),
  },
});

describe("after a restore: the pods restart", () => {
  it("every OpenBao pod of the cluster, voters and read replicas, never the Jobs'", () => {
    assert.equal(
      openbaoPodSelector("dst"),
      "openbao.org/cluster=dst,openbao.org/component in (server,read-replica)",
    );
  });

  it("the Job's end comes from completionTime, else its Complete condition; none without either", () => {
    const at = "2026-01-01T00:05:00Z";
    assert.equal(
      jobFinishedAt({ metadata: {}, status: { completionTime: at } } as KubeObject)?.toISOString(),
      "2026-01-01T00:05:00.000Z",
    );
    assert.equal(
      jobFinishedAt({
        metadata: {},
        status: { conditions: [{ type: "Complete", status: "True", lastTransitionTime: at }] },
      } as KubeObject)?.toISOString(),
      "2026-01-01T00:05:00.000Z",
    );
    assert.equal(jobFinishedAt({ metadata: {}, status: {} } as KubeObject), undefined);
  });

  it("restarts the pods created up to the Job's end (its very second included), once: their replacements are newer", () => {
    const end = new Date("2026-01-01T00:05:00Z");
    const pods = [
      pod("dst-0", "2026-01-01T00:00:00Z"),
      pod("dst-1", "2026-01-01T00:05:00Z"),
      pod("dst-2", "2026-01-01T00:05:01Z"),
      pod("dst-3", "2026-01-01T00:01:00Z", true),
    ];
    assert.deepEqual(
      olderThan(pods.map(podFacts), end).map((p) => p.name),
      ["dst-0", "dst-1"],
    );
    // The next pass sees the replacements only: nothing more to restart.
    assert.deepEqual(olderThan([podFacts(pod("dst-0", "2026-01-01T00:05:07Z"))], end), []);
  });
});

describe("a snapshot sealed by another key", () => {
  it("names the Secret to fill for the operator's static key, and force", () => {
    const hint = sealMismatchHint(cluster());
    assert.match(hint, /Secret <source>-unseal-key, key "key"/);
    assert.match(hint, /into Secret dst-unseal-key/);
    assert.match(hint, /spec\.force: true/);
  });

  it("names the setting for a static key of the user's, and the key access for a KMS seal", () => {
    assert.match(
      sealMismatchHint(cluster({ type: "static", static: { currentKey: "file:///k", currentKeyID: "k1" } })),
      /spec\.unseal\.static\.currentKey/,
    );
    assert.match(sealMismatchHint(cluster({ type: "transit" } as never)), /source's transit key/);
  });

  it("into a restore test's throwaway: says the source's seal did not open it, never to copy a key or force", () => {
    const c = cluster();
    c.metadata.name = "prod-restore-test";
    c.metadata.labels = { "openbao.org/restore-test-of": "prod" };
    const hint = sealMismatchHint(c);
    assert.match(hint, /prod-restore-test is the restore test of prod and holds prod's seal/);
    assert.match(hint, /another cluster's backup, or prod's seal key changed after it was taken/);
    assert.doesNotMatch(hint, /force|unseal-key/);
  });

  it("a refusal by OpenBao before it applied anything says the cluster was not changed", () => {
    const r = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name: "r", namespace: "ns", generation: 1 },
      spec: { cluster: "dst", source: { key: "k", target: { bucket: "b" } } },
      status: { phase: "Running" },
    } as OpenBaoRestore;
    const s = failed(r, new Date(), OpenBaoRestoreReason.SealMismatch, "could not verify hash file", {
      unchanged: true,
    });
    assert.match(s.message ?? "", /the cluster was not changed$/);
    assert.doesNotMatch(s.message ?? "", /follow-up/);
    assert.match(failed(r, new Date(), OpenBaoRestoreReason.RestoreFailed, "x").message ?? "", /follow-up/);
  });
});

describe("a root token OpenBao refuses", () => {
  const ctxWith = (token: string | undefined, events: EventInput[]): ServiceContext =>
    ({
      reader: {
        get: async () =>
          token === undefined
            ? undefined
            : {
                metadata: { name: "dst-root-token" },
                data: { token: Buffer.from(token).toString("base64") },
              },
        list: async () => [],
      },
      events: { record: (_o: unknown, e: EventInput) => events.push(e) },
      log: {
        warn: (fields: Record<string, unknown>, msg: string) =>
          events.push({ note: `${msg} ${JSON.stringify(fields)}` } as EventInput),
      },
    }) as unknown as ServiceContext;
  const denied = new BaoRequestError("dst-0", 403, "permission denied");

  it("is said once (Degraded, one log line), set aside while the Secret holds it, used again once it changes", async () => {
    // `events` collects what the context was told: log lines here; the event is Degraded's transition.
    const events: EventInput[] = [];
    const deps = { rootTokenRefusals: new RootTokenRefusals() };
    const c = cluster();
    const ctx = ctxWith("dead", events);
    assert.equal(await usableRootToken(deps, c, ctx), "dead");
    const result: PassResult = { initialized: true, desiredReplicas: 1, readyReplicas: 1 };
    assert.equal(noteRootTokenFailure(deps, c, ctx, "dead", denied, result), true);
    assert.equal(noteRootTokenFailure(deps, c, ctx, "dead", denied), true);
    assert.equal(events.length, 1, "one log line for one refused token");
    assert.match(events[0]?.note ?? "", /dst-root-token/);
    assert.doesNotMatch(events[0]?.note ?? "", /dead/);
    assert.match(result.rootTokenRefused ?? "", /Secret dst-root-token, key "token"/);

    const next: PassResult = { initialized: true, desiredReplicas: 1, readyReplicas: 1 };
    assert.equal(await usableRootToken(deps, c, ctx, next), undefined, "not used again");
    const status = nextStatus(c, next, new Date());
    const degraded = status.conditions?.find((x) => x.type === "Degraded");
    assert.equal(degraded?.status, "True");
    assert.equal(degraded?.reason, "RootTokenRefused");
    assert.doesNotMatch(degraded?.message ?? "", /dead/);
    // Its transition is the one Warning event; the next pass, still refused, is no transition.
    const again = nextStatus({ ...c, status }, next, new Date());
    assert.deepEqual(
      transitions(status.conditions, again.conditions ?? []).map((x) => x.type),
      [],
    );
    assert.equal(eventType(degraded!), "Warning");

    assert.equal(await usableRootToken(deps, c, ctxWith("valid", events)), "valid");
    // Refused again later: a new event, since it is another token.
    assert.equal(noteRootTokenFailure(deps, c, ctx, "valid", denied), true);
    assert.equal(events.length, 2);
  });

  it("other failures are not a refusal", () => {
    const events: EventInput[] = [];
    const deps = { rootTokenRefusals: new RootTokenRefusals() };
    const ctx = ctxWith("t", events);
    assert.equal(
      noteRootTokenFailure(deps, cluster(), ctx, "t", new BaoRequestError("x", 503, "sealed")),
      false,
    );
    assert.equal(noteRootTokenFailure(deps, cluster(), ctx, "t", new Error("ECONNREFUSED")), false);
    assert.equal(events.length, 0);
  });
});
