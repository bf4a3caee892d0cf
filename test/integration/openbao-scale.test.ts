import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { type LineWatch, watchLines } from "../support/kube-watch.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  installOpenBaoCrd,
  metricSum,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";

// One OpenBao cluster on the local node taken through its whole life with the operator process
// SIGKILLed at distinct points: after the certificates, after the StatefulSet, right after init,
// mid scale-out (3 → 5), mid scale-down (5 → 3) and mid storage restart. Each kill waits for the
// state that proves the point was reached; each new process must finish from what the cluster and
// OpenBao say. The order proofs read `kubectl --watch` streams as they arrive.
//
// The node's local-path provisioner cannot grow a volume (a directory has no size), so storage
// growth runs on a StorageClass of the same provisioner that allows expansion: the API server
// accepts the bigger claims, and the test plays the kubelet's part by setting the claims'
// FileSystemResizePending condition through the status subresource.

const NAME = "sbao";
const SELECTOR = `openbao.org/cluster=${NAME},openbao.org/component=server`;
// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const timings: string[] = [];
const timed = async <T>(label: string, f: () => Promise<T>): Promise<T> => {
  const started = Date.now();
  try {
    return await f();
  } finally {
    const line = `${label}: ${Math.round((Date.now() - started) / 1000)} s`;
    timings.push(line);
    console.log(`[timing] ${line}`);
  }
};

describe("openbao target: 3 → 5 → 3, storage growth, the operator killed at every step", {
  timeout: 60 * 60_000,
}, () => {
  let ctx: NodeNamespace;
  let op: OperatorProcess | undefined;
  let storageClass = "";
  /** Everything every operator process printed: nothing secret may be in it. */
  const outputs: string[] = [];
  const watches: LineWatch[] = [];
  let token = "";
  let tokenSecretUid = "";

  const start = async () => {
    op = await startOpenBaoOperator(ctx, { pollInterval: "2s", resyncInterval: "5s" });
  };
  /** SIGKILL, then a snapshot of what the dead process had reached. */
  const kill = async (point: string): Promise<Json> => {
    await op!.kill();
    outputs.push(op!.output());
    op = undefined;
    const [sts, pod0, cluster, rootToken] = await Promise.all([
      ctx.getJson(`statefulset/${NAME}`).catch(() => undefined),
      ctx.getJson(`pod/${NAME}-0`).catch(() => undefined),
      ctx.getJson(`openbaocluster/${NAME}`),
      ctx.getJson(`secret/${NAME}-root-token`).catch(() => undefined),
    ]);
    const snap = {
      point,
      statefulSetReplicas: sts?.spec.replicas,
      readyReplicas: sts?.status?.readyReplicas ?? 0,
      pod0Ready:
        pod0?.status?.conditions?.some((c: Json) => c.type === "Ready" && c.status === "True") ?? false,
      initialized: cluster.status?.initialized ?? false,
      rootTokenSecret: rootToken !== undefined,
    };
    console.log(`[kill] ${JSON.stringify(snap)}`);
    return snap;
  };
  const cluster = (): Promise<Json> => ctx.getJson(`openbaocluster/${NAME}`);
  const bao = (command: string, pod = `${NAME}-0`) =>
    ctx.kubectl(["exec", pod, "--", "sh", "-c", `BAO_TOKEN=${token} ${command}`]);
  const raftPeers = async (): Promise<Array<{ node_id: string; voter: boolean; leader: boolean }>> =>
    JSON.parse(await bao("bao operator raft list-peers -format=json")).data.config.servers;
  const condition = async (type: string): Promise<Json | undefined> =>
    (await cluster()).status?.conditions?.find((c: Json) => c.type === type);
  const ready = (p: Json) =>
    p.status?.conditions?.some((c: Json) => c.type === "Ready" && c.status === "True");
  const voterPods = async (): Promise<Json[]> =>
    JSON.parse(await ctx.kubectl(["get", "pods", "-l", SELECTOR, "-o", "json"])).items;
  const events = async (reason: string): Promise<Json[]> =>
    (await ctx.getJson("events.events.k8s.io")).items.filter((e: Json) => e.reason === reason);
  const waitPeers = (n: number, what: string) =>
    poll(
      async () => {
        const p = await raftPeers().catch(() => undefined);
        return p && p.length === n && p.every((s) => s.voter) && new Set(p.map((s) => s.node_id)).size === n
          ? p
          : undefined;
      },
      600_000,
      what,
      2000,
    );

  before(
    async () => {
      ctx = await nodeNamespace("obsc");
      await installOpenBaoCrd(ctx);
      // A class of the node's own provisioner, first without expansion (the refusal), later with it.
      storageClass = `${ctx.namespace}-grow`;
      await ctx.apply({
        apiVersion: "storage.k8s.io/v1",
        kind: "StorageClass",
        metadata: { name: storageClass },
        provisioner: "rancher.io/local-path",
        volumeBindingMode: "WaitForFirstConsumer",
        reclaimPolicy: "Delete",
        allowVolumeExpansion: false,
      });
      // The first run on a machine builds the node here: give it longer than one test's default.
    },
    { timeout: 45 * 60_000 },
  );
  after(async () => {
    for (const w of watches) w.stop();
    if (op) {
      if (process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
      await op.stop();
    }
    console.log(`[timing] summary\n${timings.join("\n")}`);
    // The StorageClass stays: the provisioner still needs it to remove the namespace's volumes, and
    // waiting for that here held the file open for minutes on a busy node. The node is the run's
    // own and goes with everything on it.
    await deleteNamespace(ctx);
  });

  it("killed after the certificates, after the StatefulSet and right after init, it still initializes once and forms 3 voters", {
    timeout: 40 * 60_000,
  }, async () => {
    await timed("CR to 3 initialized voters, with 3 kills", async () => {
      await start();
      await ctx.apply({
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: NAME },
        spec: {
          version: BAO_DEFAULT_VERSION,
          replicas: 3,
          storage: { size: "128Mi", storageClassName: storageClass },
          configuration: { raft: { autopilot: { serverStabilizationTime: "5s" } } },
        },
      });

      // 1. The server certificate exists: the certificates step has run.
      await ctx.waitFor(`secret/${NAME}-tls-server`, "create", 300);
      await kill("after certificates");

      // 2. The StatefulSet exists; pod 0 has not become Ready yet (it needs seconds to start).
      await start();
      await ctx.waitFor(`statefulset/${NAME}`, "create", 300);
      await kill("after the StatefulSet");

      // 3. The root token is stored: init happened; status may or may not say so yet.
      await start();
      await ctx.waitFor(`secret/${NAME}-root-token`, "create", 600);
      const afterInit = await kill("right after init");
      const secret = await ctx.getJson(`secret/${NAME}-root-token`);
      token = Buffer.from(secret.data.token, "base64").toString("utf8");
      tokenSecretUid = secret.metadata.uid;
      assert.match(token, /^s\./);
      // Scale-out waits for initialization to be durable in status.
      assert.ok(
        afterInit.statefulSetReplicas === 1 || afterInit.initialized,
        "more voters before init was recorded",
      );

      // 4. A fourth process finishes the job.
      await start();
      await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.initialized}=true", 600);
      await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 900);
      const peers = await waitPeers(3, "3 Raft voters");
      assert.deepEqual(
        peers.map((p) => p.node_id).sort(),
        [0, 1, 2].map((i) => `${NAME}-${i}`),
      );
      if (!afterInit.initialized) {
        // The dead process had initialized OpenBao without recording it: the next one recovered.
        assert.ok((await events("InitializationRecovered")).length >= 1, "an InitializationRecovered event");
      }
    });
    // Exactly one init: the token stored at the third kill is the one in the Secret now, and it
    // still works (list-peers above needs it); no pass reported a failed (second) init.
    const secret = await ctx.getJson(`secret/${NAME}-root-token`);
    assert.equal(secret.metadata.uid, tokenSecretUid);
    assert.equal(Buffer.from(secret.data.token, "base64").toString("utf8"), token);
    outputs.push(op!.output());
    assert.ok(!outputs.some((o) => o.includes("InitializationFailed")), "an init attempt failed");
    assert.equal((await condition("OpenBaoInitialized"))?.status, "True");

    // Data written now is read back after the scaling.
    await bao("bao secrets enable -path=proof kv-v2");
    await bao("bao kv put -mount=proof item v=written-at-3");
  });

  it("3 → 5 with the operator killed mid scale-out: two new voters join, the first three keep running", {
    timeout: 30 * 60_000,
  }, async () => {
    const before = new Map((await voterPods()).map((p) => [p.metadata.name, p.metadata.uid]));
    await timed("3 → 5 voters, with a kill", async () => {
      await ctx.kubectl(["patch", `openbaocluster/${NAME}`, "--type=merge", "-p", '{"spec":{"replicas":5}}']);
      await ctx.waitFor(`statefulset/${NAME}`, "jsonpath={.spec.replicas}=5", 300);
      const snap = await kill("mid scale-out");
      assert.ok(snap.readyReplicas < 5, "killed before the new voters were ready");
      await start();
      await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=5", 900);
      const peers = await waitPeers(5, "5 Raft voters");
      assert.deepEqual(
        peers.map((p) => p.node_id).sort(),
        [0, 1, 2, 3, 4].map((i) => `${NAME}-${i}`),
      );
    });
    // Joining changed the rendered retry_join list, not the pods that were already members.
    for (const p of await voterPods())
      if (before.has(p.metadata.name))
        assert.equal(p.metadata.uid, before.get(p.metadata.name), p.metadata.name);
    assert.equal((await cluster()).status.phase, "Running");
  });

  it("5 → 3 with the operator killed mid scale-down: each leaving peer is out of Raft before its pod goes; no data lost", {
    timeout: 30 * 60_000,
  }, async () => {
    // At the instant the StatefulSet is seen shrinking, Raft must already list only the staying voters.
    const atShrink: Promise<string[]>[] = [];
    let last = 5;
    watches.push(
      watchLines(ctx, ["get", `statefulset/${NAME}`, "-o", 'jsonpath={.spec.replicas}{"\\n"}'], (text) => {
        const n = Number(text.trim());
        if (Number.isInteger(n) && n < last) atShrink.push(raftPeers().then((p) => p.map((s) => s.node_id)));
        if (Number.isInteger(n)) last = n;
      }),
    );
    await timed("5 → 3 voters, with a kill", async () => {
      await ctx.kubectl(["patch", `openbaocluster/${NAME}`, "--type=merge", "-p", '{"spec":{"replicas":3}}']);
      // Killed once the first leaving peer is gone from Raft.
      await poll(
        async () => {
          const p = await raftPeers().catch(() => undefined);
          return p && p.length < 5 ? true : undefined;
        },
        600_000,
        "a Raft peer removed",
      );
      await kill("mid scale-down");
      await start();
      await ctx.waitFor(`statefulset/${NAME}`, "jsonpath={.spec.replicas}=3", 600);
      await poll(
        async () => ((await voterPods()).length === 3 ? true : undefined),
        600_000,
        "pods 3 and 4 gone",
        2000,
      );
      await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 600);
      const peers = await waitPeers(3, "3 Raft voters");
      assert.deepEqual(
        peers.map((p) => p.node_id).sort(),
        [0, 1, 2].map((i) => `${NAME}-${i}`),
      );
    });
    assert.ok(atShrink.length >= 1, "the StatefulSet was seen shrinking");
    for (const p of await Promise.all(atShrink))
      assert.deepEqual(
        p.sort(),
        [0, 1, 2].map((i) => `${NAME}-${i}`),
        "Raft peers when the StatefulSet shrank",
      );
    const removed = (await events("RaftPeerRemoved")).map((e) => e.note as string);
    for (const i of [3, 4])
      assert.ok(
        removed.some((n) => n.includes(`${NAME}-${i}`)) ||
          outputs.some((o) => o.includes(`"peer":"${NAME}-${i}"`)),
        `removal of ${NAME}-${i} recorded`,
      );
    // The leaving members' volumes went with their pods: a later scale-out starts them fresh.
    await poll(
      async () => {
        const names = (await ctx.getJson("pvc")).items.map((c: Json) => c.metadata.name);
        return names.includes(`data-${NAME}-3`) || names.includes(`data-${NAME}-4`) ? undefined : true;
      },
      300_000,
      "the claims of pods 3 and 4 deleted",
      2000,
    );
    assert.equal((await bao("bao kv get -mount=proof -field=v item")).trim(), "written-at-3");
    const secret = await ctx.getJson(`secret/${NAME}-root-token`);
    assert.equal(secret.metadata.uid, tokenSecretUid, "the root-token Secret was never replaced");
  });

  it("storage: shrink and class change refused, growth refused until the class allows it, then claims grow", {
    timeout: 20 * 60_000,
  }, async () => {
    await timed("storage refusals and claim growth", async () => {
      // A shrink never reaches the operator: the definition refuses it.
      await assert.rejects(
        ctx.kubectl([
          "patch",
          `openbaocluster/${NAME}`,
          "--type=merge",
          "-p",
          '{"spec":{"storage":{"size":"64Mi"}}}',
        ]),
        /storage\.size may only grow/,
      );
      const degraded = (reason: string) =>
        poll(
          async () => {
            const c = await condition("Degraded");
            return c?.status === "True" && c.reason === reason ? c : undefined;
          },
          180_000,
          `Degraded ${reason}`,
          2000,
        );
      await ctx.kubectl([
        "patch",
        `openbaocluster/${NAME}`,
        "--type=merge",
        "-p",
        '{"spec":{"storage":{"storageClassName":"some-other-class"}}}',
      ]);
      const cls = await degraded("StorageClassChangeNotSupported");
      assert.match(cls.message, /spec\.storage\.storageClassName some-other-class/);
      await ctx.kubectl([
        "patch",
        `openbaocluster/${NAME}`,
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { storage: { storageClassName: storageClass, size: "256Mi" } } }),
      ]);
      const refused = await degraded("StorageResizeNotSupported");
      assert.match(
        refused.message,
        new RegExp(`StorageClass ${storageClass} does not allow volume expansion`),
      );
      for (const i of [0, 1, 2])
        assert.equal((await ctx.getJson(`pvc/data-${NAME}-${i}`)).spec.resources.requests.storage, "128Mi");

      await ctx.kubectl([
        "patch",
        `storageclass/${storageClass}`,
        "--type=merge",
        "-p",
        '{"allowVolumeExpansion":true}',
      ]);
      await poll(
        async () => {
          const sizes = await Promise.all(
            [0, 1, 2].map(
              async (i) => (await ctx.getJson(`pvc/data-${NAME}-${i}`)).spec.resources.requests.storage,
            ),
          );
          return sizes.every((s) => s === "256Mi") ? true : undefined;
        },
        180_000,
        "every voter claim asking for 256Mi",
        2000,
      );
      await poll(
        async () => ((await condition("Degraded"))?.status === "False" ? true : undefined),
        180_000,
        "Degraded False again",
        2000,
      );
    });
  });

  it("a pending file-system resize restarts the voters one at a time, the active node last, across an operator kill", {
    timeout: 30 * 60_000,
  }, async () => {
    const leader = (await cluster()).status.activeLeader as string;
    const original = new Map((await voterPods()).map((p) => [p.metadata.name, p.metadata.uid]));
    // Pod state as the watch reports it; at each deletion every other voter must be Ready.
    const state = new Map<string, { uid: string; ready: boolean; deleting: boolean }>();
    const violations: string[] = [];
    const deletions: string[] = [];
    watches.push(
      watchLines(
        ctx,
        [
          "get",
          "pods",
          "-l",
          SELECTOR,
          "-o",
          `jsonpath={.metadata.name}|{.metadata.uid}|{.metadata.deletionTimestamp}|{.status.conditions[?(@.type=="Ready")].status}{"\\n"}`,
        ],
        (text) => {
          const [name, uid, deletion, readyStatus] = text.split("|");
          if (!name || !uid) return;
          const prev = state.get(name);
          const deleting = Boolean(deletion);
          if (deleting && prev?.uid === uid && !prev.deleting) {
            deletions.push(name);
            for (const [other, s] of state)
              if (other !== name && (!s.ready || s.deleting))
                violations.push(
                  `${name} deleted while ${other} was ${s.deleting ? "terminating" : "not ready"}`,
                );
          }
          state.set(name, { uid, ready: readyStatus === "True", deleting });
        },
      ),
    );
    await poll(
      async () => (state.size === 3 ? true : undefined),
      60_000,
      "the pod watch's initial list",
      500,
    );

    await timed(
      "3 voters restarted one at a time for a pending file-system resize, with a kill",
      async () => {
        // Play the kubelet: the volume grew, its file system waits for the next mount.
        const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
        for (const i of [0, 1, 2])
          await ctx.kubectl([
            "patch",
            `pvc/data-${NAME}-${i}`,
            "--subresource=status",
            "--type=merge",
            "-p",
            JSON.stringify({
              status: {
                conditions: [{ type: "FileSystemResizePending", status: "True", lastTransitionTime: now }],
              },
            }),
          ]);
        // Killed right after its first restart; the next process carries on without repeating it.
        await poll(
          async () => (deletions.length >= 1 ? true : undefined),
          300_000,
          "the first restart",
          1000,
        );
        await kill("mid storage restart");
        await start();
        await poll(
          async () => {
            const pods = await voterPods();
            return pods.length === 3 &&
              pods.every(
                (p) =>
                  p.metadata.uid !== original.get(p.metadata.name) &&
                  ready(p) &&
                  !p.metadata.deletionTimestamp,
              )
              ? true
              : undefined;
          },
          1_200_000,
          "all 3 voters restarted and Ready",
          2000,
        );
      },
    );
    assert.deepEqual(violations, [], "a voter was restarted while another was not Ready");
    assert.equal(deletions.length, 3, `each voter restarted once (${deletions.join(", ")})`);
    assert.equal(deletions[2], leader, `the active node ${leader} restarted last (${deletions.join(", ")})`);

    // The conditions are still set (nothing plays the kubelet's second half here), yet the pods are
    // newer than them: further passes restart nothing.
    const settled = new Map((await voterPods()).map((p) => [p.metadata.name, p.metadata.uid]));
    const reconciles = async () =>
      metricSum(await op!.metrics(), "controller_runtime_reconcile_total", { controller: "openbaocluster" });
    const base = await reconciles();
    await poll(
      async () => ((await reconciles()) >= base + 3 ? true : undefined),
      120_000,
      "three more passes",
      2000,
    );
    for (const p of await voterPods())
      assert.equal(p.metadata.uid, settled.get(p.metadata.name), p.metadata.name);
    assert.equal((await condition("StorageExpanded"))?.status, "False");
    // The kubelet's second half: the file systems grew at mount; the claims report the new size.
    for (const i of [0, 1, 2])
      await ctx.kubectl([
        "patch",
        `pvc/data-${NAME}-${i}`,
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({ status: { capacity: { storage: "256Mi" }, conditions: null } }),
      ]);
    await poll(
      async () => ((await condition("StorageExpanded"))?.status === "True" ? true : undefined),
      120_000,
      "StorageExpanded True",
      2000,
    );
    await ctx.waitFor(`openbaocluster/${NAME}`, "jsonpath={.status.readyReplicas}=3", 300);
    await waitPeers(3, "3 Raft voters after the restarts");
    assert.equal((await bao("bao kv get -mount=proof -field=v item")).trim(), "written-at-3");
    outputs.push(op!.output());
    assert.ok(!outputs.some((o) => o.includes(token)), "the root token appears in an operator's log");
  });
});
