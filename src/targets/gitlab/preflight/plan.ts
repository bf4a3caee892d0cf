import { groupOf } from "../../../runtime/ownership.js";
import type { RenderedObject } from "../apply/rendered.js";
import { BATCHED_CHECK_LABEL, TARGET_VERSION_LABEL } from "../status/version.js";

// Spec 001, "Preflight": the dry run applies what the first pass of an upgrade applies, the gated
// workloads paused and the pre-migrations Job. The gated workloads are the ones that run GitLab's
// Rails code against the database, Webservice and Sidekiq (the upstream upgrade flow pauses them
// while the pre-deployment migrations run, so old pods keep serving until the schema is ready).

/** Chart components whose workloads an upgrade holds back until the pre-deployment migrations ran. */
export const GATED_COMPONENTS: readonly string[] = ["webservice", "sidekiq"];
export const MIGRATIONS_COMPONENT = "migrations";

/** The pre-migrations Job runs the migrations Job's pods with post-deployment migrations left out. */
export const SKIP_POST_DEPLOYMENT_MIGRATIONS = "SKIP_POST_DEPLOYMENT_MIGRATIONS";
const PRE_SUFFIX = "-pre";
const NAME_MAX = 63;

export interface PreflightPlan {
  /** The objects to dry-run apply, in install order (Jobs last, as planApply sorts them). */
  objects: RenderedObject[];
  /** "Kind name" of each gated workload, for messages. */
  gated: string[];
  /** Name of the pre-migrations Job; undefined when the render has no migrations Job. */
  preMigrationsJob?: string;
}

/**
 * The component a chart object belongs to: the GitLab chart labels it `app` (the real chart) or
 * `app.kubernetes.io/name` (newer templates and the fixture).
 */
export function componentOf(o: RenderedObject): string | undefined {
  const labels = o.metadata.labels ?? {};
  return labels["app"] ?? labels["app.kubernetes.io/name"];
}

const isKind = (o: RenderedObject, group: string, kind: string) =>
  groupOf(o.apiVersion) === group && o.kind === kind;

type Spec = Record<string, unknown>;
type Container = { env?: { name: string; value?: string }[] } & Record<string, unknown>;

/** A gated workload as the first upgrade pass applies it: a Deployment paused, a StatefulSet at 0. */
function paused(o: RenderedObject): RenderedObject {
  const spec = { ...((o as { spec?: Spec }).spec ?? {}) };
  // A paused Deployment keeps its old ReplicaSet serving and rolls nothing out; a StatefulSet has no
  // pause, so holding it back means no replicas of the new revision.
  if (o.kind === "Deployment") spec["paused"] = true;
  else spec["replicas"] = 0;
  return { ...o, spec } as RenderedObject;
}

function preMigrationsName(name: string): string {
  const base =
    name.length + PRE_SUFFIX.length > NAME_MAX ? name.slice(0, NAME_MAX - PRE_SUFFIX.length) : name;
  return `${base.replace(/[-.]+$/, "")}${PRE_SUFFIX}`;
}

/** The migrations Job renamed `<name>-pre`, each container told to skip post-deployment migrations. */
function preMigrations(job: RenderedObject): RenderedObject {
  const spec = ((job as { spec?: Spec }).spec ?? {}) as Spec;
  const template = (spec["template"] ?? {}) as Spec;
  const podSpec = (template["spec"] ?? {}) as Spec;
  const containers = ((podSpec["containers"] ?? []) as Container[]).map((c) => ({
    ...c,
    env: [
      ...(c.env ?? []).filter((e) => e.name !== SKIP_POST_DEPLOYMENT_MIGRATIONS),
      { name: SKIP_POST_DEPLOYMENT_MIGRATIONS, value: "true" },
    ],
  }));
  return {
    ...job,
    metadata: { ...job.metadata, name: preMigrationsName(job.metadata.name) },
    spec: { ...spec, template: { ...template, spec: { ...podSpec, containers } } },
  } as RenderedObject;
}

/**
 * What the preflight dry run applies for an upgrade step, from the step's planned objects (release
 * labels already stamped). Pure: the inputs are not changed.
 */
export function planPreflight(planned: readonly RenderedObject[]): PreflightPlan {
  const objects: RenderedObject[] = [];
  const gated: string[] = [];
  let preMigrationsJob: string | undefined;
  for (const o of planned) {
    const component = componentOf(o);
    const workload = isKind(o, "apps", "Deployment") || isKind(o, "apps", "StatefulSet");
    // Chart 10.3 and later label the migrations Job with the version it migrates to; earlier ones
    // are known by their component. The batched migrations wait Job shares both: left out.
    const migrations =
      isKind(o, "batch", "Job") &&
      o.metadata.labels?.[BATCHED_CHECK_LABEL] === undefined &&
      (component === MIGRATIONS_COMPONENT || o.metadata.labels?.[TARGET_VERSION_LABEL] !== undefined);
    if (workload && component !== undefined && GATED_COMPONENTS.includes(component)) {
      objects.push(paused(o));
      gated.push(`${o.kind} ${o.metadata.name}`);
    } else if (migrations && !preMigrationsJob) {
      const job = preMigrations(o);
      objects.push(job);
      preMigrationsJob = job.metadata.name;
    }
  }
  return { objects, gated, preMigrationsJob };
}
