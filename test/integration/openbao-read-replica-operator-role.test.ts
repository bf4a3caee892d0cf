import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { Writes } from "../../src/targets/openbao/apply.js";
import { BaoClient } from "../../src/targets/openbao/baoclient/client.js";
import { refOf } from "../../src/targets/openbao/cluster-ref.js";
import { Component, podName } from "../../src/targets/openbao/identity.js";
import type { ServiceContext } from "../../src/targets/openbao/services.js";
import type { PassResult } from "../../src/targets/openbao/status.js";
import type { StepDeps } from "../../src/targets/openbao/steps/context.js";
import { DEMOTE_RETRY_MS, DemoteRefusals } from "../../src/targets/openbao/steps/demote-refusals.js";
import { forgetOidcFacts, readOidcFacts } from "../../src/targets/openbao/steps/oidc-facts.js";
import { operatorJwtToken } from "../../src/targets/openbao/steps/operator-jwt.js";
import { keepReadReplicasNonVoters } from "../../src/targets/openbao/steps/read-replica-suffrage.js";
import { AutopilotChecks } from "../../src/targets/openbao/workload/autopilot/autopilot.js";
import { renderSelfInitRequests } from "../../src/targets/openbao/workload/config/index.js";
import type { OidcBootstrapFacts } from "../../src/targets/openbao/workload/config/oidc-bootstrap.js";
import { baoCall } from "../../src/testenv/baohttp.js";
import { type RaftNode, type RaftOpenBao, startRaftOpenBao } from "../../src/testenv/baoraft.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { waitUntil } from "../../src/testenv/wait.js";
import { type Entry, one, parseHcl, plain } from "../fixtures/openbao/golden/hcl-reader.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";

// Issue 41 for a self-initialized cluster (no root token kept): the operator keeps its read replicas
// on Autopilot's non-voter list through selfInit.oidc's operator role. Real parts: OpenBao Raft on
// loopback (a voter and a read replica joined as non-voter), the JWT auth, policies and role exactly
// as the bootstrap renders them (applied with the root token, as OpenBao's self-init applies them),
// and the operator's login with a real ServiceAccount token from the shared API server
// (TokenRequest), checked by OpenBao against the keys the bootstrap read from that API server.
//
// A snapshot taken before the replica joined is restored, so Autopilot's list forgets the replica
// and promotes it. With upstream's operator grants (a cluster bootstrapped without read replicas)
// OpenBao refuses the demotion: reported with the policy line to add, not retried hot. With that
// line added (what a cluster bootstrapped with read replicas gets), the replica is a non-voter again.

const NAME = "rrjwt";

describe("read replica demoted by the operator's JWT role (real OpenBao Raft, real ServiceAccount token)", {
  timeout: 10 * 60_000,
}, () => {
  let client: KubeClient;
  let ns: string;
  let bao: RaftOpenBao;
  let replica: RaftNode;
  let facts: OidcBootstrapFacts;
  const clock = { now: Date.now() };
  /** What the refusal said (the first test), for the second. */
  let refused = "";
  const events: string[] = [];
  const deps = {
    autopilotChecks: new AutopilotChecks(),
    demoteRefusals: new DemoteRefusals(),
  } as unknown as StepDeps;

  const cluster = (readReplicas: number): OpenBaoCluster =>
    ({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: NAME, namespace: ns, uid: "rrjwt-uid" },
      spec: {
        version: "2.5.0",
        replicas: 1,
        storage: { size: "1Gi" },
        selfInit: { enabled: true, oidc: { enabled: true }, requests: [] },
        ...(readReplicas > 0 ? { readReplicas: { replicas: readReplicas } } : {}),
      },
      status: { activeLeader: podName({ name: NAME, namespace: "x" }, 0) },
    }) as unknown as OpenBaoCluster;

  /** The bootstrap's requests for `c`, in order, as OpenBao's self-init would send them. */
  const bootstrapRequests = (c: OpenBaoCluster) => {
    const doc = parseHcl(renderSelfInitRequests(c, facts));
    return (one(doc, "initialize", "operator-bootstrap").value as Entry[]).map(
      (r) => [r.labels[0]!, plain(r.value) as { path: string; data: Record<string, unknown> }] as const,
    );
  };
  const active = () => new BaoClient({ address: bao.nodes[0]!.addr });
  const suffrage = async () => {
    const config = await baoCall(bao.nodes[0]!.addr, bao.rootToken, "GET", "sys/storage/raft/configuration");
    const server = (config.data.config.servers as { node_id: string; voter: boolean }[]).find(
      (s) => s.node_id === replica.id,
    );
    const state = await active().autopilotDetail(bao.rootToken);
    return { voter: server?.voter, nodeType: state.servers[replica.id]?.nodeType };
  };
  const waitFor = (what: string, check: (s: Awaited<ReturnType<typeof suffrage>>) => boolean) =>
    waitUntil(async () => check(await suffrage()), { what, timeoutMs: 90_000, intervalMs: 500 });

  /** One Autopilot pass of the operator for the cluster with one read replica, logged in as the operator role. */
  const pass = async (): Promise<PassResult> => {
    const c = cluster(1);
    const result = {} as PassResult;
    const ctx = {
      client,
      reader: { get: async (_t: unknown, name: string) => ({ metadata: { name, uid: `uid-${name}` } }) },
      events: {
        record: (_o: unknown, e: { type: string; reason: string; note: string }) =>
          events.push(`${e.type} ${e.reason}: ${e.note}`),
      },
      now: () => new Date(clock.now),
      log: { debug() {}, info() {}, warn() {}, error() {} },
    } as unknown as ServiceContext;
    const baoOf = async () => active();
    const sa = { namespace: ns, name: "op" };
    await keepReadReplicasNonVoters(
      { cluster: c, ctx, deps, writes: new Writes(false), result },
      baoOf,
      async () => (await operatorJwtToken(client, baoOf, c, sa, clock.now))!,
      "operator-role",
    );
    return result;
  };

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "rr-jwt");
    // The operator's own ServiceAccount (configured as operatorServiceAccount outside a pod).
    await client.apply(
      SERVICE_ACCOUNT,
      { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "op", namespace: ns } },
      { fieldManager: "test-setup", force: true },
    );
    forgetOidcFacts();
    facts = await readOidcFacts(client, Date.now(), undefined, { namespace: ns, name: "op" });
    bao = await startRaftOpenBao({ nodes: 1 });
    const res = await fetch(`${bao.addr}/v1/sys/storage/raft/snapshot`, {
      headers: { "x-vault-token": bao.rootToken },
    });
    assert.equal(res.status, 200);
    const snapshot = await res.arrayBuffer();
    // The replica carries the name the operator gives the read replica pod: its Raft node id.
    replica = await bao.addNode({ nonVoter: true, id: podName(refOf(cluster(1)), 0, Component.ReadReplica) });
    await waitFor("the replica a non-voter member", (s) => s.voter === false && s.nodeType === "non-voter");
    // Restore the snapshot from before the replica, restart the active node: Autopilot promotes it.
    const restored = await fetch(`${bao.addr}/v1/sys/storage/raft/snapshot`, {
      method: "POST",
      headers: { "x-vault-token": bao.rootToken },
      body: snapshot,
    });
    assert.equal(restored.status, 204, await restored.text());
    const node0 = bao.nodes[0]!;
    await node0.stop();
    await node0.start();
    await waitUntil(
      async () => {
        await node0.unseal();
        return true;
      },
      { what: "the active node unsealed again", timeoutMs: 60_000, intervalMs: 500 },
    );
    await waitFor("the replica promoted to a voter", (s) => s.voter === true);
  });
  after(async () => {
    await bao?.stop();
    await client?.delete(NAMESPACE, ns).catch(() => {});
    client?.close();
  });

  it("with upstream's operator grants OpenBao refuses the demotion: reported with the line to add, not asked again hot", async () => {
    // The restored data came without the bootstrap: write it as a cluster initialized without read
    // replicas did (upstream's operator policy exactly).
    const old = bootstrapRequests(cluster(0));
    assert.ok(
      !String(old.find(([n]) => n === "create-operator-policy")![1].data["policy"]).includes("demote"),
    );
    for (const [, r] of old) await baoCall(bao.addr, bao.rootToken, "POST", r.path, r.data);

    const result = await pass();
    refused = result.readReplicaSuffrage ?? "";
    assert.match(result.readReplicaSuffrage ?? "", /refuses sys\/storage\/raft\/demote \(HTTP 403\)/);
    assert.match(result.readReplicaSuffrage ?? "", new RegExp(replica.id));
    assert.deepEqual(
      events.map((e) => e.split(":")[0]),
      ["Warning DemoteRefused"],
    );
    assert.equal((await suffrage()).voter, true, "the replica is still a voter");
    // The next pass reports it again without a login, a read or an event.
    const again = await pass();
    assert.equal(again.readReplicaSuffrage, result.readReplicaSuffrage);
    assert.equal(events.length, 1);
  });

  it("with the line the message names added to the policy, the next try demotes it and Autopilot makes it a non-voter", async () => {
    const line = /add this line to policy openbao-operator: (.*)$/.exec(refused)?.[1];
    assert.ok(line, `the message names the line: ${refused}`);
    const current = await baoCall(bao.addr, bao.rootToken, "GET", "sys/policies/acl/openbao-operator");
    const policy = `${current.data.policy}\n${line}`;
    // What a cluster bootstrapped with read replicas is given from the start.
    const fresh = bootstrapRequests(cluster(1)).find(([n]) => n === "create-operator-policy")![1];
    assert.equal(policy, fresh.data["policy"]);
    await baoCall(bao.addr, bao.rootToken, "POST", "sys/policies/acl/openbao-operator", { policy });

    clock.now += DEMOTE_RETRY_MS;
    const result = await pass();
    assert.equal(result.readReplicaSuffrage, undefined);
    assert.match(events.at(-1)!, /^Normal AutopilotConfigured: .* non-voters/);
    await waitFor("the replica a non-voter again", (s) => s.voter === false && s.nodeType === "non-voter");
    // Settled: the next pass finds it so, and then asks nothing more.
    assert.equal((await pass()).readReplicaSuffrage, undefined);
    assert.equal(events.length, 2);
  });
});
