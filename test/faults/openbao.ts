import { randomBytes } from "node:crypto";
import type { Condition } from "../../src/apis/common.js";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../src/apis/openbaorestore.js";
import {
  EVENTS_V1,
  JOB,
  PERSISTENT_VOLUME_CLAIM,
  POD,
  SECRET,
  STATEFULSET,
} from "../../src/runtime/builtin-types.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { runCommand } from "../../src/testenv/exec.js";
import { reloadOperatorImage } from "../../src/testenv/node/images/node-images.js";
import { OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
import { sharedNode } from "../../src/testenv/node/shared.js";
import { S3_TEST_CREDENTIALS, startS3Server } from "../../src/testenv/objectstores.js";
import { installOpenBaoCrd, poll } from "../support/openbao-operator.js";
import { BAO_NET } from "./campaign.js";
import {
  type Checkpoints,
  type Lifecycle,
  type NamedCrash,
  type Outage,
  type PreparedRun,
  type RunContext,
  shows,
} from "./lifecycle.js";
import {
  type BlueGreenOutcome,
  blueGreenPhase,
  blueGreenUpgradeSpec,
  blueGreenViolations,
} from "./openbao-bluegreen.js";
import { type RestoreOutcome, restorePhase, restoreViolations } from "./openbao-restore.js";
import type { BaoRun, BaoStatus } from "./openbao-run.js";
import { type ScaleOutcome, scalePhase, scaleViolations } from "./openbao-scale.js";
import { stopKeeping } from "./s3-restart.js";
import { type SeenObjects, watchSeen } from "./seen.js";
import type { RecordedWrite } from "./write-proxy.js";

// OpenBao on the local node, the operator a host process inside the node's network namespace (as
// an in-cluster one: pods by their cluster names) talking to the node's API server through the
// campaign's recording proxy, which listens on the host's end of the node's veth. The lifecycle:
// create the voters, write canary data (the harness, with the root token), a manual backup to a
// local S3 server, a restore of that backup (openbao-restore.ts), a rolling upgrade 2.6.2 → 2.7.2,
// a scale 3 → 5 → 3 (openbao-scale.ts), delete (deletionPolicy DeleteAll). Crash points are the
// operator's API server writes and, with `baoWrites`, its OpenBao writes too: those go to the pods
// directly over TLS the operator verifies, so they are reported from inside its process
// (bao-writes-preload.ts) rather than proxied. Each phase is marked, so `--phase NAME` kills only
// among that phase's writes.

const SERVICE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
};
const NAME = "fbao";
const POD_KILL = "bao-pod-kill";
const SEAL_IN_BACKUP = "bao-sealed-in-backup";
const KILL_IN_SCALE_IN = "bao-pod-kill-scale-in";
const SEAL_IN_ROLL = "bao-sealed-in-roll";
const S3 = "s3";
const FROM = "2.6.2";
const TO = "2.7.2";
const BUCKET = "snapshots";
const BACKUP_LABEL = "openbao.org/component";
const names = {
  rootToken: `${NAME}-root-token`,
  unsealKey: `${NAME}-unseal-key`,
};

export interface OpenBaoLifecycleOptions {
  /** Voters to create (3 in the campaign; 1 for CI's single crash point). */
  voters: number;
  /** A manual backup to the local S3 server after the canary is written. */
  backup: boolean;
  /** An upgrade 2.6.2 → 2.7.2 (otherwise the cluster is created at 2.7.2). */
  upgrade: boolean;
  /** The upgrade blue-green (`spec.upgrade.strategy: BlueGreen`, phase "bluegreen") instead of rolling. */
  blueGreen?: boolean;
  /** A restore of the backup (needs `backup`). */
  restore?: boolean;
  /** Voters to scale out to and back from (undefined: no scale phase). */
  scaleTo?: number;
  /**
   * The operator's OpenBao writes recorded as crash points too (`--bao-writes`:
   * bao-writes-preload.ts), numbered with its API server writes; off, the write numbers stay those
   * of the API server alone, as every campaign before them counted.
   */
  baoWrites?: boolean;
}

export const FULL_OPENBAO: OpenBaoLifecycleOptions = {
  voters: 3,
  backup: true,
  upgrade: true,
  restore: true,
  scaleTo: 5,
};

/**
 * Killed right after OpenBao answered sys/init, before the operator read the answer (needs
 * `baoWrites`): OpenBao is initialized and its root token is in an answer nobody will read.
 */
export const SYS_INIT_ANSWERED: NamedCrash = {
  name: "right after OpenBao answers sys/init (unread)",
  match: (w) => w.backend === "bao" && w.method === "PUT" && w.path === "/v1/sys/init",
};

/** Killed right after the root token is stored: init is done, status does not say so yet. */
export const ROOT_TOKEN_STORED: NamedCrash = {
  name: `right after Secret ${names.rootToken} is written`,
  match: (w) => w.method === "PATCH" && w.path.endsWith(`/secrets/${names.rootToken}`),
};

type Status = BaoStatus;

export function openBaoLifecycle(o: OpenBaoLifecycleOptions = FULL_OPENBAO): Lifecycle {
  // The executor image (backup Jobs) is the operator's own, built from dist once per process.
  let imageLoaded: Promise<unknown> | undefined;
  const parts = [
    `${o.voters} voter${o.voters === 1 ? "" : "s"}`,
    o.backup && "backup",
    o.backup && o.restore && "restore",
    o.upgrade && (o.blueGreen ? "blue-green upgrade" : "upgrade"),
    o.scaleTo && `scale ${o.voters} → ${o.scaleTo} → ${o.voters}`,
    o.baoWrites && "OpenBao writes counted",
  ];
  return {
    name: `OpenBao (node: ${parts.filter(Boolean).join(", ")})`,
    outages: openBaoOutages(o),
    async prepare(ctx: RunContext): Promise<PreparedRun> {
      const { client, namespace: ns } = ctx;
      const node = await sharedNode();
      const kubectl = async (args: string[], input?: string) =>
        (
          await runCommand(node.kubectl, ["--kubeconfig", node.kubeconfigPath, "-n", ns, ...args], {
            input,
          })
        ).stdout;
      await installOpenBaoCrd({ kubectl });
      if (o.backup) imageLoaded ??= reloadOperatorImage(node.ctr, node.containerdSocket);
      await imageLoaded;
      // The S3 server inside the node's network, where the backup Job's pod reaches it.
      const s3Options = { buckets: [BUCKET], host: node.addresses.nodeIp, wrap: node.inCluster };
      let s3 = o.backup ? await startS3Server(s3Options) : undefined;
      let stopped: Awaited<ReturnType<typeof stopKeeping>> | undefined;
      // Before the run's first look at the namespace: the harness's, not a leak.
      if (s3)
        await client.create(SECRET, {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "s3-creds", namespace: ns },
          stringData: { ...S3_TEST_CREDENTIALS },
        });
      const secrets = watchSeen(client, SECRET, ns);
      const jobs = watchSeen(client, JOB, ns);
      const stepMs = 15 * 60_000;
      let rootToken = "";
      // The voter StatefulSet serving: the cluster's name until a blue-green upgrade moves it.
      let serving = NAME;
      const canary = randomBytes(12).toString("hex");

      const cluster = () => client.getOrUndefined<OpenBaoCluster>(OPENBAOCLUSTER, NAME, ns);
      const status = async (): Promise<Status> => (await cluster())?.status ?? ({} as Status);
      /** What the lifecycle's objects show: the cluster's conditions and its restore requests'. */
      const shownConditions = async (): Promise<Condition[]> => {
        const [c, restores] = await Promise.all([
          cluster(),
          client.list<OpenBaoRestore>(OPENBAORESTORE, { namespace: ns }),
        ]);
        return [
          ...(c?.status?.conditions ?? []),
          ...restores.items.flatMap((r) => r.status?.conditions ?? []),
        ];
      };
      const lockHolder = (s: Status) => s.operationLock?.holder ?? "";
      /**
       * The rolling upgrade's moment for a pod fault: its first pod replaced, pod 0 (the roll's
       * last) not yet; an upgrade over before a look saw it is a moment missed, not waited for.
       */
      const rollReplacedFirst = async (): Promise<Status> => {
        const s = await poll(
          async () => {
            const st = await status();
            if (st.currentVersion === TO) return { missed: true as const, st };
            return (st.upgrade?.completedPods?.length ?? 0) > 0 ? { missed: false as const, st } : undefined;
          },
          stepMs,
          "the rolling upgrade to replace its first pod",
        );
        if (s.missed) throw new Error("the upgrade ended before a look saw its first pod replaced");
        return s.st;
      };
      /** A bao command in pod 0 with the root token (handed over on stdin, never in argv or logs). */
      const bao = (command: string) =>
        kubectl(
          ["exec", "-i", `${serving}-0`, "--", "sh", "-c", `read -r BAO_TOKEN; export BAO_TOKEN; ${command}`],
          `${rootToken}\n`,
        );
      /** Waits, one look a second, for the status `done` accepts and the lock free. */
      const settled = (what: string, done: (s: Status) => boolean) =>
        poll(
          async () => {
            const s = await status();
            return done(s) && lockHolder(s) === "" ? s : undefined;
          },
          stepMs,
          `OpenBaoCluster ${NAME} ${what}`,
        );
      /**
       * What else tells a backup's end when status.backup has no key: the backup Jobs as stored
       * now (a Job that succeeded with its result never recorded is a different bug from one that
       * failed) and the BackingUp condition. Names, counts and reasons only.
       */
      const backupEvidence = async (): Promise<string> => {
        const jobsNow = (
          await client.list<KubeObject>(JOB, { namespace: ns, labelSelector: `${BACKUP_LABEL}=backup` })
        ).items.map((j) => {
          const st = (j["status"] ?? {}) as {
            succeeded?: number;
            failed?: number;
            conditions?: { type: string; status: string; reason?: string }[];
          };
          const conds = (st.conditions ?? [])
            .filter((c) => c.status === "True")
            .map((c) => `${c.type}${c.reason ? `/${c.reason}` : ""}`);
          return `${j.metadata.name} succeeded ${st.succeeded ?? 0} failed ${st.failed ?? 0} [${conds.join(", ")}]`;
        });
        const seenJobs = new Set(
          jobs.versions.filter((v) => v.labels[BACKUP_LABEL] === "backup").map((v) => v.uid),
        ).size;
        const cond = (await status()).conditions?.find((c) => c.type === "BackingUp");
        return `backup Jobs now: ${jobsNow.join("; ") || "none"} (${seenJobs} ever stored); BackingUp ${cond?.status ?? "?"} ${cond?.reason ?? ""}: ${cond?.message ?? ""}`;
      };
      /** Deletes the cluster (DeleteAll) and waits for it, its claims, seal key and root token to go. */
      const deletePhase = async (cp: Checkpoints): Promise<void> => {
        ctx.phase("delete");
        await client.delete(OPENBAOCLUSTER, NAME, ns);
        await poll(
          async () => ((await cluster()) === undefined ? true : undefined),
          stepMs,
          `OpenBaoCluster ${NAME} to be deleted (its finalizer cleared)`,
        );
        // DeleteAll: the data claims go once their pods are gone (the garbage collector takes the
        // StatefulSet, then the pods); the seal key and root token at once.
        await poll(
          async () =>
            (await client.list(PERSISTENT_VOLUME_CLAIM, { namespace: ns })).items.length === 0
              ? true
              : undefined,
          stepMs,
          `the data claims of ${NAME} to be gone`,
          2000,
        );
        const left = (await client.list(SECRET, { namespace: ns })).items
          .map((s) => s.metadata.name!)
          .filter((n) => n === names.rootToken || n === names.unsealKey);
        cp.set("deleted", { sealKeyAndRootTokenLeft: left });
      };
      /**
       * Why there is no root token to go on with. A kill between OpenBao's answer to sys/init and
       * the root-token Secret's write loses the token (OpenBao tells it once): the window
       * docs/openbaocluster.md names as the one that cannot be closed. Then what the page promises
       * is checked instead: initialized once, and a RootTokenMissing event saying so.
       */
      const noRootToken = async (): Promise<string> => {
        const w = ctx.writes;
        const init = w.findIndex((x) => x.backend === "bao" && x.path === "/v1/sys/init" && x.status === 200);
        const stored = w.some(
          (x, i) => i > init && x.backend === "kube" && x.path.endsWith(`/secrets/${names.rootToken}`),
        );
        if (init < 0 || stored)
          return `OpenBao is initialized but Secret ${names.rootToken} holds no root token`;
        // Events are sent after the pass that decides them: waited for, not looked at once.
        const told = await poll(
          async () =>
            (await client.list<KubeObject & { reason?: string }>(EVENTS_V1, { namespace: ns })).items.some(
              (e) => e.reason === "RootTokenMissing",
            ) || undefined,
          60_000,
          "the RootTokenMissing event",
          2000,
        ).catch(() => false);
        return `root token lost in the documented window (killed after OpenBao answered sys/init, before Secret ${names.rootToken} was written): ${initializedOnce(w).join("; ") || "sys/init answered 200 once"}; RootTokenMissing event ${told ? "recorded" : "MISSING"}`;
      };
      const target = s3 && {
        provider: "s3",
        endpoint: s3.endpoint,
        bucket: BUCKET,
        pathPrefix: "faults",
        usePathStyle: true,
        credentialsSecretRef: { name: "s3-creds" },
      };
      const baoRun: BaoRun = {
        client,
        ns,
        name: NAME,
        voters: o.voters,
        serving: () => serving,
        stepMs,
        say: ctx.say,
        bao,
        settled,
        writes: ctx.writes,
        jobs,
      };
      let restored: RestoreOutcome | undefined;
      let restoreWrites: readonly RecordedWrite[] = [];
      let scaled: ScaleOutcome | undefined;
      let blueGreen: BlueGreenOutcome | undefined;

      return {
        kube: { kubeconfigPath: node.kubeconfigPath, host: node.addresses.hostIp },
        // Loaded for the OpenBao black hole too, its writes then not numbered.
        ...((o.baoWrites || ctx.outage?.backend === BAO_NET) && {
          baoWrites: { host: node.addresses.hostIp, record: !!o.baoWrites },
        }),
        wrap: node.inCluster,
        backends: {},
        leakKinds: [JOB, STATEFULSET, SERVICE, PERSISTENT_VOLUME_CLAIM],
        // The namespace's own, made by the API server's controllers whenever they get to it.
        keptOnPurpose: (id) => id === "ServiceAccount/default" || id === "ConfigMap/kube-root-ca.crt",
        section: () => `  openbao:
    namespaces: [${ns}]
    pollInterval: 2s
    resyncInterval: 5s
    executorImage: ${OPERATOR_IMAGE}
`,
        cuts: {
          /**
           * The object store stopped (connections refused), then started again on its port with the
           * objects it held, as a real store restarting keeps them.
           */
          [S3]: {
            async down() {
              if (!s3) return;
              stopped = await stopKeeping(s3, s3Options);
              ctx.say(
                `object store stopped holding ${stopped.kept.length} object(s): ${stopped.kept.join(", ")}`,
              );
            },
            async up() {
              // Whether the outage reached a Job: the executor says so in its log each time it waits.
              for (const j of (await client.list<KubeObject>(JOB, { namespace: ns })).items) {
                const log = await kubectl(["logs", `job/${j.metadata.name}`]).catch(() => "");
                const waits = log
                  .split("\n")
                  .filter((l) => l.includes("the object store did not answer")).length;
                ctx.say(`Job ${j.metadata.name}: ${waits} wait(s) for the object store in its log so far`);
              }
              if (stopped) s3 = await stopped.start();
              stopped = undefined;
            },
          },
        },
        duringOutage: (_backend, outage) => watchConditions(ctx, shownConditions, outage),
        faults: {
          /**
           * Once the backup Job exists, pod 0 is sealed (`bao operator seal`, the root token): the
           * backup and the pass go on against a cluster with one voter sealed, which a static seal
           * unseals only when its process starts again; healed by deleting the pod, as a person
           * would (nothing in the documents has the operator restart a pod sealed by hand).
           */
          async [SEAL_IN_BACKUP]() {
            const s = await poll(
              async () => {
                const st = await status();
                if (st.backup?.lastHandledManualTrigger === "t1" && !st.backup?.jobName)
                  return { missed: true as const, st };
                return st.backup?.jobName ? { missed: false as const, st } : undefined;
              },
              stepMs,
              "the backup Job to be created",
              500,
            );
            if (s.missed) throw new Error("the backup ended before a look saw its Job");
            const pod = `${serving}-0`;
            await bao("bao operator seal");
            return {
              did: `pod ${pod} sealed while Job ${s.st.backup?.jobName} ran`,
              // A static seal unseals at start only: the pod restarted, as a person would.
              async heal() {
                // Gone already (restarted meanwhile): nothing left sealed.
                await kubectl(["delete", "pod", pod, "--wait=false", "--ignore-not-found"]);
                return `pod ${pod} deleted to come back unsealed`;
              },
            };
          },
          /**
           * Once the roll has replaced its first pod, pod 0 (not replaced yet, the last of the roll)
           * is killed outright: SIGKILL through a forced delete with no grace, as a node losing it.
           */
          async [POD_KILL]() {
            const s = await rollReplacedFirst();
            const uid = (await client.getOrUndefined(POD, `${NAME}-0`, ns))?.metadata.uid;
            await kubectl(["delete", "pod", `${NAME}-0`, "--grace-period=0", "--force", "--wait=false"]);
            return `pod ${NAME}-0 (${uid}) killed once pods ${s.upgrade?.completedPods?.join(", ")} were upgraded`;
          },
          /** The same moment, pod 0 sealed instead; healed by deleting it, as in a backup. */
          async [SEAL_IN_ROLL]() {
            const s = await rollReplacedFirst();
            await bao("bao operator seal");
            return {
              did: `pod ${NAME}-0 sealed once pods ${s.upgrade?.completedPods?.join(", ")} were upgraded`,
              async heal() {
                await kubectl(["delete", "pod", `${NAME}-0`, "--wait=false", "--ignore-not-found"]);
                return `pod ${NAME}-0 deleted to come back unsealed`;
              },
            };
          },
          /**
           * Once a shrink is asked for (the cluster's replicas below its StatefulSet's, which the
           * operator lowers only after the leaving peers are out of Raft), pod 0, which stays and
           * may lead, is killed outright: Raft elects anew while the operator removes peers.
           */
          async [KILL_IN_SCALE_IN]() {
            const seen = await poll(
              async () => {
                const [c, sts] = await Promise.all([
                  cluster(),
                  client.getOrUndefined<KubeObject>(STATEFULSET, serving, ns),
                ]);
                const want = c?.spec.replicas ?? 3;
                const live = (sts?.["spec"] as { replicas?: number } | undefined)?.replicas ?? 0;
                return want < live ? { want, live } : undefined;
              },
              stepMs,
              "the scale-in to begin",
              250,
            );
            const pod = `${serving}-0`;
            const uid = (await client.getOrUndefined(POD, pod, ns))?.metadata.uid;
            await kubectl(["delete", "pod", pod, "--grace-period=0", "--force", "--wait=false"]);
            return `pod ${pod} (${uid}) killed as ${seen.live} voters began shrinking to ${seen.want}`;
          },
          ...Object.fromEntries(
            BLUE_GREEN_FAULTS.map((f) => [
              f.name,
              async () => {
                const s = await poll(
                  async () => {
                    const st = await status();
                    const bg = st.blueGreen;
                    if (bg?.phase === f.phase) return { missed: false as const, bg };
                    // Over (green serving or rolled back) before a look saw the phase.
                    if (st.currentVersion === TO && (bg?.phase ?? "Idle") === "Idle")
                      return { missed: true as const, bg };
                    return undefined;
                  },
                  stepMs,
                  `the blue-green phase ${f.phase}`,
                  250,
                );
                if (s.missed) throw new Error(`the blue-green upgrade ended before a look saw ${f.phase}`);
                const set = f.pod === "green" ? `${NAME}-${s.bg?.greenRevision}` : serving;
                const pod = `${set}-0`;
                if (f.harm === "kill") {
                  await kubectl(["delete", "pod", pod, "--grace-period=0", "--force", "--wait=false"]);
                  return `${f.pod} pod ${pod} killed in ${f.phase}`;
                }
                await kubectl(
                  [
                    "exec",
                    "-i",
                    pod,
                    "--",
                    "sh",
                    "-c",
                    "read -r BAO_TOKEN; export BAO_TOKEN; bao operator seal",
                  ],
                  `${rootToken}\n`,
                );
                return {
                  did: `${f.pod} pod ${pod} sealed in ${f.phase}`,
                  async heal() {
                    // Gone already (blue removed once green took over): nothing left sealed.
                    await kubectl(["delete", "pod", pod, "--wait=false", "--ignore-not-found"]);
                    return `pod ${pod} deleted to come back unsealed`;
                  },
                };
              },
            ]),
          ),
        },
        async cleanup() {
          await secrets.stop();
          await jobs.stop();
          await s3?.stop();
        },
        async drive(): Promise<Checkpoints> {
          const cp: Checkpoints = new Map();
          const version = o.upgrade ? FROM : TO;
          ctx.phase("create");
          await client.apply(
            OPENBAOCLUSTER,
            {
              apiVersion: "openbao.org/v1alpha1",
              kind: "OpenBaoCluster",
              metadata: { name: NAME, namespace: ns },
              spec: {
                version,
                replicas: o.voters,
                storage: { size: "128Mi" },
                deletionPolicy: "DeleteAll",
                ...(o.upgrade && o.blueGreen && { upgrade: blueGreenUpgradeSpec(`openbao/openbao:${TO}`) }),
                configuration: { raft: { autopilot: { serverStabilizationTime: "5s" } } },
                ...(s3 && {
                  backup: {
                    // Far away: only the manual trigger runs a backup.
                    schedule: "0 0 1 1 *",
                    // The root token: the lifecycle tests the operator's bookkeeping, not policies.
                    tokenSecretRef: { name: names.rootToken },
                    retention: { maxCount: 10 },
                    target,
                  },
                }),
              },
            },
            { fieldManager: "faults-harness", force: true },
          );
          const created = await settled(
            `initialized with ${o.voters} ready at ${version}`,
            (s) =>
              s.initialized === true &&
              s.readyReplicas === o.voters &&
              s.currentVersion === version &&
              s.phase === "Running",
          );
          cp.set("created", {
            initialized: created.initialized,
            readyReplicas: created.readyReplicas,
            currentVersion: created.currentVersion,
            phase: created.phase,
          });

          const token = await client.getOrUndefined<KubeObject & { data?: Record<string, string> }>(
            SECRET,
            names.rootToken,
            ns,
          );
          rootToken = Buffer.from(token?.data?.["token"] ?? "", "base64").toString("utf8");
          // Said now rather than after the canary's three minutes of refused writes.
          if (!rootToken) {
            const why = await noRootToken();
            // Still deleted, so that what is left afterwards is judged as in every run.
            await deletePhase(cp);
            throw new Error(why);
          }
          ctx.phase("canary");
          // A new KV v2 mount refuses writes while it sets its layout up: tried until one lands.
          await poll(
            async () => {
              await bao(
                "bao secrets list -format=json | grep -q '\"canary/\"' || bao secrets enable -path=canary kv-v2",
              );
              await bao(`bao kv put -mount=canary item v=${canary}`);
              return true;
            },
            180_000,
            "the canary written",
            2000,
          );

          let backupKey = "";
          let backupFailure = "";
          if (s3) {
            ctx.phase("backup");
            await client.mergePatch(OPENBAOCLUSTER, NAME, ns, {
              metadata: { annotations: { "openbao.org/trigger-backup": "t1" } },
            });
            const b = await settled(
              "to record backup t1",
              (s) => s.backup?.lastHandledManualTrigger === "t1" && !s.backup?.jobName,
            );
            cp.set("backup", {
              trigger: b.backup?.lastHandledManualTrigger,
              succeeded: !!b.backup?.lastBackupTime,
            });
            backupKey = b.backup?.lastBackupKey ?? "";
            // What the status says of a failed backup (reason and message carry no secret value).
            backupFailure = `status.backup: consecutiveFailures ${b.backup?.consecutiveFailures ?? 0}, lastFailureReason ${b.backup?.lastFailureReason ?? "none"}, lastFailureMessage ${b.backup?.lastFailureMessage ?? "none"}`;
          }

          if (target && o.restore) {
            if (!backupKey)
              throw new Error(
                `the backup recorded no object key to restore (${backupFailure}; ${await backupEvidence()})`,
              );
            ctx.phase("restore");
            const from = ctx.writes.length;
            restored = await restorePhase(baoRun, { key: backupKey, target, canaryAtBackup: canary });
            restoreWrites = ctx.writes.slice(from);
            cp.set("restore", { completed: restored.phases.at(-1) === "Completed" });
          }

          if (o.upgrade && o.blueGreen) {
            ctx.phase("bluegreen");
            blueGreen = await blueGreenPhase(baoRun, TO, (set) => {
              serving = set;
            });
            cp.set("bluegreen", { currentVersion: TO, rolledBack: blueGreen.rollbackReason !== "" });
          } else if (o.upgrade) {
            ctx.phase("upgrade");
            await client.mergePatch(OPENBAOCLUSTER, NAME, ns, { spec: { version: TO } });
            const u = await settled(
              `upgraded to ${TO}`,
              (s) =>
                s.currentVersion === TO &&
                s.readyReplicas === o.voters &&
                s.phase === "Running" &&
                !s.upgrade,
            );
            cp.set("upgraded", { currentVersion: u.currentVersion, readyReplicas: u.readyReplicas });
          }

          if (o.scaleTo) {
            ctx.phase("scale");
            scaled = await scalePhase(baoRun, o.scaleTo);
            cp.set("scaled", { peersAt: scaled.peersAt, peersBack: scaled.peersBack });
          }

          const read = await poll(
            async () =>
              (await bao("bao kv get -mount=canary -field=v item").catch(() => "")).trim() || undefined,
            120_000,
            "the canary read back",
            2000,
          ).catch(() => "");
          cp.set("canary", { readable: read === canary });

          await deletePhase(cp);
          return cp;
        },
        check(run): string[] {
          const out: string[] = [];
          out.push(...onlyOne(secrets, names.rootToken, "root token"));
          out.push(...onlyOne(secrets, names.unsealKey, "unseal key"));
          if (o.baoWrites) out.push(...initializedOnce(ctx.writes), ...refusedRepeatedly(ctx.writes));
          if (s3) {
            const backups = new Set(
              jobs.versions.filter((v) => v.labels[BACKUP_LABEL] === "backup").map((v) => v.uid),
            );
            if (backups.size !== 1) out.push(`${backups.size} backup Jobs for one trigger`);
          }
          const b = run.get("backup") as { succeeded?: boolean } | undefined;
          if (s3 && b && !b.succeeded) out.push("backup t1 was recorded but did not succeed");
          const c = run.get("canary") as { readable?: boolean } | undefined;
          if (c && !c.readable) out.push("the canary written after init is not readable at the end");
          out.push(...restoreViolations(baoRun, restored, restoreWrites));
          if (o.scaleTo) out.push(...scaleViolations(baoRun, o.scaleTo, scaled));
          out.push(...blueGreenViolations(baoRun, TO, blueGreen));
          return out;
        },
      };
    },
  };
}

/**
 * Initialized exactly once, as OpenBao saw it: one sys/init answered 200 over every operator
 * process of the run (the preload reports the restarted ones too). A second would mean a process
 * that did not see the first took OpenBao for uninitialized; OpenBao refuses it, but asking is the
 * bug.
 */
export function initializedOnce(writes: readonly RecordedWrite[]): string[] {
  const inits = writes.filter((w) => w.backend === "bao" && w.method === "PUT" && w.path === "/v1/sys/init");
  const ok = inits.filter((w) => w.status === 200).length;
  const out: string[] = [];
  if (ok !== 1) out.push(`OpenBao's sys/init answered 200 ${ok} times, not once`);
  if (inits.length > ok) out.push(`sys/init was sent ${inits.length} times (${ok} answered 200), not once`);
  return out;
}

/** How often one OpenBao write may be refused in a run before it is a loop, not a retry. */
export const REFUSALS_ALLOWED = 2;

/**
 * No OpenBao write refused again and again (4xx, the same method and path more than
 * REFUSALS_ALLOWED times over the run): a request OpenBao judged wrong does not become right by
 * repeating it, and every pass sending it means what it carries is never applied (the Autopilot
 * settings at one voter were refused 8 times before that was fixed). Status codes only.
 */
export function refusedRepeatedly(writes: readonly RecordedWrite[]): string[] {
  const refused = new Map<string, number[]>();
  for (const w of writes)
    if (w.backend === "bao" && w.status >= 400 && w.status < 500) {
      const key = `${w.method} ${w.path}`;
      refused.set(key, [...(refused.get(key) ?? []), w.status]);
    }
  return [...refused]
    .filter(([, codes]) => codes.length > REFUSALS_ALLOWED)
    .map(
      ([key, codes]) => `OpenBao refused ${key} ${codes.length} times (${[...new Set(codes)].join(", ")})`,
    );
}

/**
 * Initialized exactly once: one Secret of this name was ever stored (one uid) and it never held
 * another value (one digest): a second init, a regenerated root token or a new seal key shows as a
 * second uid or digest.
 */
function onlyOne(seen: SeenObjects, name: string, what: string): string[] {
  const uids = seen.uids(name).length;
  const digests = seen.digests(name).length;
  const out: string[] = [];
  if (uids !== 1) out.push(`${uids} ${what} Secrets stored (${name}), not one`);
  if (digests > 1) out.push(`the ${what} in ${name} changed ${digests - 1} times`);
  return out;
}

/** Faults at a blue-green phase: a pod of one side killed outright or sealed by hand. */
const BLUE_GREEN_FAULTS: {
  name: string;
  label: string;
  phase: string;
  pod: "blue" | "green";
  harm: "kill" | "seal";
  visible?: string[];
}[] = [
  // JoiningMesh passed between two looks 250 ms apart on the node (2026-12-07): Syncing (green
  // joined, held there for minSyncDuration) is the first moment after the join a look can catch.
  {
    name: "bg-green-killed-syncing",
    label: "green pod 0 killed once green joined (Syncing)",
    phase: "Syncing",
    pod: "green",
    harm: "kill",
  },
  {
    name: "bg-blue-sealed-promoting",
    label: "blue pod 0 sealed during promotion",
    phase: "Promoting",
    pod: "blue",
    harm: "seal",
    visible: ["OpenBaoSealed=True/Sealed", "Available=False"],
  },
  {
    name: "bg-blue-killed-syncing",
    label: "blue pod 0 killed while green syncs",
    phase: "Syncing",
    pod: "blue",
    harm: "kill",
  },
  {
    name: "bg-green-sealed-syncing",
    label: "green pod 0 sealed while it syncs",
    phase: "Syncing",
    pod: "green",
    harm: "seal",
    // OpenBaoSealed is the serving side's; green's sealed pod is named in the upgrade's wait.
    visible: ["Upgrading=True/InProgress ~ sealed"],
  },
  {
    name: "bg-green-killed-demoting",
    label: "green pod 0 killed while blue is demoted",
    phase: "DemotingBlue",
    pod: "green",
    harm: "kill",
  },
];

/** The object store stopped 30 s from the creation of the Job of `phase` (backup or restore). */
function storeDownOnceJob(phase: string, more: string, visible: string[]): Outage {
  return {
    backend: S3,
    label: `object store stopped 30 s once the ${phase} Job exists${more}`,
    when: {
      write: `the ${phase} Job's creation`,
      phase,
      match: (w) => w.backend === "kube" && w.method === "POST" && /\/jobs$/.test(w.path),
    },
    seconds: 30,
    visible,
  };
}

/**
 * Pod 0 sealed by the fault `backend` (armed at the first write, it waits for its moment), watched
 * 60 s, then deleted to come back unsealed; the serving side's seal must show.
 */
function pod0Sealed(backend: string, when: string): Outage {
  return {
    backend,
    label: `pod 0 sealed ${when}`,
    at: 0,
    seconds: 60,
    visible: ["OpenBaoSealed=True/Sealed", "Available=False"],
  };
}

/** Whether a lifecycle of these options has the phase an outage needs. */
function openBaoOutages(o: OpenBaoLifecycleOptions): Outage[] {
  const out: Outage[] = [
    {
      backend: BAO_NET,
      label: "operator ↔ OpenBao black-holed 30 s from sys/init",
      when: { request: /^\/v1\/sys\/init$/ },
      seconds: 30,
      visible: ["OpenBaoInitialized=False/InitializationFailed", "Degraded=True/InitializationFailed"],
    },
  ];
  if (o.backup)
    out.push(
      storeDownOnceJob("backup", "", ["BackingUp=True/InProgress", "BackingUp=False/BackupFailed"]),
      pod0Sealed(SEAL_IN_BACKUP, "during a backup"),
    );
  if (o.backup && o.restore)
    // The Job has no API access: while it waits for the store the request can only say it runs.
    out.push(
      storeDownOnceJob("restore", " (back with its objects)", [
        "RestoreComplete=False/InProgress",
        "RestoreComplete=False/JobNotStarted",
      ]),
    );
  if (o.scaleTo)
    out.push(
      {
        backend: BAO_NET,
        label: "operator ↔ OpenBao black-holed 30 s from the scale-in's first remove-peer",
        when: { request: /^\/v1\/sys\/storage\/raft\/remove-peer$/ },
        seconds: 30,
        visible: ["Available=False/ScaleDownWaiting", "Degraded=True"],
      },
      // Armed at the first write; the kill waits for the scale-in to begin.
      { backend: KILL_IN_SCALE_IN, label: "pod 0 killed as the scale-in begins", at: 0, seconds: 30 },
    );
  if (o.upgrade && !o.blueGreen)
    out.push(
      {
        backend: "kube",
        label: "API server unreachable 30 s mid rolling upgrade (the operator's proxy down)",
        when: { phase: "upgrade", index: 2 },
        seconds: 30,
      },
      {
        backend: BAO_NET,
        label: "operator ↔ OpenBao black-holed 30 s from the upgrade's step-down",
        when: { request: /^\/v1\/sys\/step-down$/ },
        seconds: 30,
        visible: ["Upgrading=True/StepDownFailed", "Degraded=True"],
      },
      // Armed at the first write; the fault itself waits for its moment in the upgrade.
      { backend: POD_KILL, label: "pod 0 killed mid rolling upgrade", at: 0, seconds: 0 },
      pod0Sealed(SEAL_IN_ROLL, "mid rolling upgrade"),
    );
  // Armed at the first write; each waits for its phase. A killed pod comes back by itself: 30 s
  // watched, nothing required; a sealed one is watched 60 s, then deleted.
  if (o.upgrade && o.blueGreen)
    for (const f of BLUE_GREEN_FAULTS)
      out.push({
        backend: f.name,
        label: f.label,
        at: 0,
        seconds: f.harm === "seal" ? 60 : 30,
        visible: f.visible,
      });
  return out;
}

/**
 * While an outage lasts: the OpenBaoCluster's and its restores' conditions, read past the operator
 * every half second, each `Type=Status/Reason` counted; at the end one of `visible` must have been seen.
 */
function watchConditions(
  ctx: RunContext,
  conditions: () => Promise<Condition[]>,
  outage: Outage | undefined,
): { stop(): Promise<string[]> } {
  const seen = new Map<string, number>();
  let matched: string | undefined;
  let stopped = false;
  const looking = (async () => {
    while (!stopped) {
      for (const x of await conditions().catch(() => [])) {
        const key = `${x.type}=${x.status}/${x.reason}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        matched ??= outage?.visible && shows(outage.visible, x);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await looking;
      const all = [...seen].map(([k, n]) => `${k} ×${n}`).join(", ") || "nothing";
      ctx.say(`while ${outage?.backend} was down, conditions seen: ${all}`);
      if (!outage?.visible || matched) return [];
      return [`while ${outage.backend} was down none of ${outage.visible.join(" | ")} showed (seen: ${all})`];
    },
  };
}
