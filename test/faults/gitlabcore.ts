import type { GitLabCore } from "../../src/apis/gitlabcore.js";
import {
  CONFIGMAP,
  JOB,
  ROLE,
  ROLE_BINDING,
  SECRET,
  SERVICE_ACCOUNT,
  STATEFULSET,
} from "../../src/runtime/builtin-types.js";
import { findCondition } from "../../src/runtime/conditions.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import {
  applyGitLab,
  fixtureChartsDir,
  fixtureVersions,
  gitlabCore,
  installGitLabCrds,
} from "../support/gitlab.js";
import { startJobStandIn } from "../support/job-stand-in.js";
import { eventually } from "../support/kube.js";
import type { Checkpoints, Lifecycle, PreparedRun, RunContext } from "./lifecycle.js";

// GitLabCore with the fixture chart (the real chart's hook shapes): install 10.1.2 (pre-install
// hooks), upgrade one minor to 10.2.1 (pre-upgrade hooks, the migrations Job), a values change
// (webservice replicas), a prune (sidekiq turned off: its objects leave the chart), delete. No
// kubelet runs here: the harness completes every Job as it appears (test/support/job-stand-in.ts)
// and counts each one the API server ever stored, so a hook run twice is seen even when the
// operator was killed between creating a hook Job and recording it.

const t = (group: string, version: string, kind: string, plural: string): ResourceType => ({
  group,
  version,
  kind,
  plural,
  namespaced: true,
});
const DEPLOYMENT = t("apps", "v1", "Deployment", "deployments");
const SERVICE = t("", "v1", "Service", "services");
const PDB = t("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets");
/** Every namespaced kind the fixture chart renders at these versions with these values. */
const KINDS: ResourceType[] = [
  CONFIGMAP,
  SECRET,
  SERVICE_ACCOUNT,
  ROLE,
  ROLE_BINDING,
  SERVICE,
  DEPLOYMENT,
  STATEFULSET,
  JOB,
  PDB,
];
/** What the API server or the test set up itself, not the operator. */
const NOT_OURS = new Set(["ConfigMap/kube-root-ca.crt", "ServiceAccount/default"]);

const NAME = "gl";
const FROM = "10.1.2";
const TO = "10.2.1";
const values = (extra: Record<string, unknown> = {}) => ({
  // The hook ServiceAccount is the chart's own hook; no RBAC (the operator applies none).
  "shared-secrets": { serviceAccount: { create: true, name: `${NAME}-hooks` }, rbac: { create: false } },
  global: { ingress: { enabled: false }, gatewayApi: { enabled: false } },
  ...extra,
});

type Phase = "install" | "upgrade" | "values" | "prune" | "delete";

export function gitLabCoreLifecycle(): Lifecycle {
  return {
    name: "GitLabCore (fixture chart)",
    async prepare(ctx: RunContext): Promise<PreparedRun> {
      const { client, namespace: ns } = ctx;
      await installGitLabCrds(client, false);
      const helm = await ensureHelm();
      const charts = fixtureChartsDir(
        fixtureVersions().filter((v) => v.version === FROM || v.version === TO),
      );
      const jobs = startJobStandIn(client, ns);
      // Generous for a loaded 2-core machine: a phase renders with helm and runs hooks one by one.
      const phaseMs = 180_000;
      const kept = new Set<string>();

      const apply = (version: string, extra?: Record<string, unknown>) =>
        applyGitLab(
          client,
          gitlabCore(ns, NAME, {
            version: { type: "Static", version },
            hostname: "gitlab.example.com",
            chart: { values: values(extra) },
          }),
        );
      const get = <T extends KubeObject>(type: ResourceType, name: string) =>
        client.getOrUndefined<T>(type, name, ns);

      /** The GitLabCore's current generation is reconciled, no hook run is open, and `done` holds. */
      const settled = (what: string, done: (g: GitLabCore) => Promise<boolean> | boolean) =>
        eventually(
          async () => {
            const g = await get<GitLabCore>(GITLABCORE, NAME);
            if (!g || g.status?.observedGeneration !== g.metadata.generation || g.status?.hookRun)
              return undefined;
            if (!(await done(g))) return undefined;
            // Paced: each look lists every kind.
            await new Promise((r) => setTimeout(r, 200));
            // The pass writes its status before it prunes: settled is when no object the
            // GitLabCore owns is of another chart version (an earlier migrations Job, say).
            for (const kind of KINDS)
              for (const o of (await client.list<KubeObject>(kind, { namespace: ns })).items)
                if (
                  (o.metadata.ownerReferences ?? []).some((r) => r.uid === g.metadata.uid) &&
                  o.metadata.labels?.["helm.sh/chart"] !== `gitlab-${g.status?.version}`
                )
                  return undefined;
            return true;
          },
          phaseMs,
          `GitLabCore ${NAME} to be ${what}`,
        );

      /** The release as it stands: the GitLabCore's status words and every object in the namespace. */
      const observe = async (): Promise<unknown> => {
        const g = await get<GitLabCore>(GITLABCORE, NAME);
        const objects: Record<string, unknown> = {};
        for (const kind of KINDS)
          for (const o of (await client.list<KubeObject>(kind, { namespace: ns })).items) {
            const id = `${kind.kind}/${o.metadata.name}`;
            if (NOT_OURS.has(id)) continue;
            objects[id] = describe(o, g?.metadata.uid);
          }
        const conditions: Record<string, string> = {};
        for (const type of ["Initialized", "Progressing", "Upgradeable"]) {
          const c = findCondition(g?.status?.conditions as never, type);
          conditions[type] = c ? `${c.status} ${c.reason}` : "absent";
        }
        return {
          status: g && {
            version: g.status?.version,
            targetVersion: g.status?.targetVersion,
            hooksVersion: g.status?.hooksVersion,
            conditions,
          },
          objects,
        };
      };

      /** Job names created during `phase`, with how many times each was created. */
      const created = (phase: Phase) => {
        const out: Record<string, number> = {};
        for (const j of jobs.seen) if (j.during === phase) out[j.name] = (out[j.name] ?? 0) + 1;
        return out;
      };

      return {
        backends: {},
        env: { HELM_BINARY: helm, HELM_CHARTS: charts.dir, ENABLE_DYNAMIC_CHART_PULL: "false" },
        leakKinds: KINDS.filter((k) => ![CONFIGMAP, SECRET, SERVICE_ACCOUNT].includes(k)),
        keptOnPurpose: (id) => kept.has(id),
        async cleanup() {
          await jobs.stop();
          charts.remove();
        },
        section: () => `  gitlab:
    namespaces: [${ns}]
    requeueInterval: 2s
    stepInterval: 1s
    hookTimeout: 120s
`,
        async drive(): Promise<Checkpoints> {
          const cp: Checkpoints = new Map();
          const step = async (
            phase: Phase,
            change: () => Promise<unknown>,
            done: Parameters<typeof settled>[1],
          ) => {
            jobs.phase(phase);
            await change();
            await settled(phase, done);
            cp.set(phase, await observe());
          };
          await step(
            "install",
            () => apply(FROM),
            (g) => g.status?.version === FROM,
          );
          await step(
            "upgrade",
            () => apply(TO),
            (g) => g.status?.version === TO,
          );
          await step(
            "values",
            () => apply(TO, { gitlab: { webservice: { replicas: 2 } } }),
            async () =>
              (await get<KubeObject & { spec?: { replicas?: number } }>(DEPLOYMENT, `${NAME}-webservice`))
                ?.spec?.replicas === 2,
          );
          await step(
            "prune",
            () => apply(TO, { gitlab: { webservice: { replicas: 2 }, sidekiq: { enabled: false } } }),
            async () => (await get(DEPLOYMENT, `${NAME}-sidekiq`)) === undefined,
          );
          jobs.phase("delete");
          const uid = (await get<GitLabCore>(GITLABCORE, NAME))?.metadata.uid;
          await client.delete(GITLABCORE, NAME, ns);
          await eventually(
            async () => ((await get(GITLABCORE, NAME)) === undefined ? true : undefined),
            phaseMs,
            `GitLabCore ${NAME} to be deleted (its finalizer cleared)`,
          );
          // No garbage collector runs here: what the deleted GitLabCore owns would go with it. What
          // nothing owns must be a hook Helm keeps (no hook-succeeded policy), and nothing else.
          const left: string[] = [];
          for (const kind of KINDS)
            for (const o of (await client.list<KubeObject>(kind, { namespace: ns })).items) {
              const id = `${kind.kind}/${o.metadata.name}`;
              if (NOT_OURS.has(id)) continue;
              const owners = o.metadata.ownerReferences ?? [];
              if (owners.some((r) => r.uid === uid)) continue;
              const policy = o.metadata.annotations?.["helm.sh/hook-delete-policy"] ?? "";
              if (o.metadata.annotations?.["helm.sh/hook"] && !policy.includes("hook-succeeded"))
                kept.add(id);
              left.push(id);
            }
          cp.set("delete", { left: left.sort() });
          cp.set("jobs created", {
            install: created("install"),
            upgrade: created("upgrade"),
            values: created("values"),
            prune: created("prune"),
            delete: created("delete"),
          });
          return cp;
        },
        check(): string[] {
          const out: string[] = [];
          const seen = new Map<string, number>();
          for (const j of jobs.seen)
            seen.set(`${j.during} ${j.name}`, (seen.get(`${j.during} ${j.name}`) ?? 0) + 1);
          for (const [k, n] of seen)
            if (n > 1)
              out.push(`Job ${k.split(" ")[1]} created ${n} times during the ${k.split(" ")[0]} phase`);
          return out;
        },
      };
    },
  };
}

/** What of one object must come out the same with or without faults. */
function describe(o: KubeObject, owner: string | undefined): unknown {
  const spec = (o as { spec?: { replicas?: number } }).spec;
  return {
    chart: o.metadata.labels?.["helm.sh/chart"],
    hook: o.metadata.annotations?.["helm.sh/hook"],
    ownedByGitLabCore: (o.metadata.ownerReferences ?? []).some((r) => r.uid === owner),
    ...(spec?.replicas !== undefined ? { replicas: spec.replicas } : {}),
  };
}
