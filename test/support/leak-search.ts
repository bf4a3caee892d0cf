import assert from "node:assert/strict";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";

// The canary tests' search, shared by every target: plant distinct values in every secret input,
// drive the objects through their life, then look for each value byte for byte in every place a
// value must never be. A place is a named text; the report counts places and bytes so a search
// that found nothing can be told from one that looked nowhere.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const type = (group: string, version: string, kind: string, plural: string): ResourceType => ({
  group,
  version,
  kind,
  plural,
  namespaced: true,
});

/** Kinds whose metadata (labels, annotations) is searched; Secrets only by metadata, never data. */
const METADATA_KINDS: ResourceType[] = [
  type("", "v1", "ConfigMap", "configmaps"),
  type("", "v1", "Secret", "secrets"),
  type("", "v1", "Service", "services"),
  type("", "v1", "ServiceAccount", "serviceaccounts"),
  type("", "v1", "Pod", "pods"),
  type("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
  type("apps", "v1", "StatefulSet", "statefulsets"),
  type("apps", "v1", "Deployment", "deployments"),
  type("batch", "v1", "Job", "jobs"),
  type("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets"),
  type("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies"),
  type("networking.k8s.io", "v1", "Ingress", "ingresses"),
  type("rbac.authorization.k8s.io", "v1", "Role", "roles"),
  type("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
];
/** Workloads whose whole spec is searched, and whose env must come from Secrets only. */
const WORKLOAD_KINDS = new Set(["StatefulSet", "Deployment", "Job", "Pod"]);

export class LeakSearch {
  private readonly places = new Map<string, string>();

  /** Adds one place; a place added twice keeps both texts. */
  add(place: string, text: string): void {
    this.places.set(place, (this.places.get(place) ?? "") + text);
  }

  /**
   * Every object a namespace holds that a value could reach: events (both APIs), every ConfigMap
   * whole, the labels and annotations of every object of the common kinds (Secrets' data left out:
   * that is where values belong), the whole spec of every workload, and the status of the custom
   * resources given. Returns the workloads' pod specs for {@link assertEnvFromSecretsOnly}.
   */
  async addNamespace(client: KubeClient, ns: string, custom: ResourceType[] = []): Promise<Json[]> {
    const podSpecs: Json[] = [];
    for (const t of [type("events.k8s.io", "v1", "Event", "events"), type("", "v1", "Event", "events")]) {
      const events = await client.list(t, { namespace: ns });
      this.add(`events (${t.group || "core"})`, JSON.stringify(events.items));
    }
    for (const t of METADATA_KINDS) {
      const items = (await client.list(t, { namespace: ns })).items as Json[];
      for (const o of items) {
        const where = `${t.kind}/${o["metadata"].name}`;
        const { labels, annotations } = o["metadata"];
        this.add(`${where} metadata`, JSON.stringify({ labels, annotations }));
        if (t.kind === "ConfigMap") this.add(`${where} data`, JSON.stringify([o["data"], o["binaryData"]]));
        if (WORKLOAD_KINDS.has(t.kind)) {
          this.add(`${where} spec`, JSON.stringify(o["spec"]));
          this.add(`${where} status`, JSON.stringify(o["status"] ?? {}));
          const pod = t.kind === "Pod" ? o["spec"] : o["spec"]?.template?.spec;
          if (pod) podSpecs.push({ where, pod });
        }
      }
    }
    for (const t of custom) {
      for (const o of (await client.list(t, { namespace: ns })).items as KubeObject[]) {
        const j = o as unknown as Json;
        const where = `${t.kind}/${o.metadata.name}`;
        this.add(`${where} status`, JSON.stringify(j["status"] ?? {}));
        this.add(`${where} metadata`, JSON.stringify({ l: o.metadata.labels, a: o.metadata.annotations }));
      }
    }
    return podSpecs;
  }

  /** Fails naming every place that holds a canary; prints how much was searched. */
  assertNone(canaries: readonly string[], what: string): { places: number; bytes: number } {
    assert.ok(canaries.length > 0, "no canaries planted");
    for (const c of canaries)
      assert.ok(c.length >= 3, `canary ${JSON.stringify(c)} is too short to search for`);
    assert.equal(new Set(canaries).size, canaries.length, "canaries must be distinct");
    const hits: string[] = [];
    let bytes = 0;
    for (const [place, text] of this.places) {
      bytes += Buffer.byteLength(text, "utf8");
      for (const c of canaries) if (text.includes(c)) hits.push(`${c} in ${place}`);
    }
    const report = { places: this.places.size, bytes };
    process.stdout.write(
      `# leak search (${what}): ${canaries.length} canaries, ${report.places} places, ${report.bytes} bytes, ${hits.length} hits\n`,
    );
    assert.deepEqual(hits, [], `secret values found where they must never be`);
    return report;
  }

  /** The text of places whose name contains `part` (for checks that the sample holds what it should). */
  text(part: string): string {
    return [...this.places]
      .filter(([p]) => p.includes(part))
      .map(([, t]) => t)
      .join("\n");
  }
}

/**
 * Every env var of every container (init containers too) is a plain value holding no canary or
 * comes from a Secret by secretKeyRef; no envFrom but from Secrets.
 */
export function assertEnvFromSecretsOnly(podSpecs: Json[], canaries: readonly string[]): number {
  let checked = 0;
  for (const { where, pod } of podSpecs) {
    for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])] as Json[]) {
      for (const e of (c["env"] ?? []) as Json[]) {
        checked++;
        if (e["valueFrom"]) {
          const from = Object.keys(e["valueFrom"]);
          assert.ok(
            from.every((k) => k === "secretKeyRef" || k === "fieldRef" || k === "resourceFieldRef"),
            `${where} ${c["name"]} env ${e["name"]} comes from ${from.join(", ")}`,
          );
        } else
          for (const v of canaries)
            assert.ok(
              !String(e["value"] ?? "").includes(v),
              `${where} ${c["name"]} env ${e["name"]} holds a secret`,
            );
      }
      for (const f of (c["envFrom"] ?? []) as Json[])
        assert.ok(f["secretRef"], `${where} ${c["name"]} envFrom not from a Secret`);
    }
  }
  return checked;
}

/** The /metrics text and the operator's log as places. */
export function addProcess(search: LeakSearch, logs: string, metrics: string): void {
  assert.ok(logs.length > 0, "the operator logged nothing");
  search.add("operator log", logs);
  search.add("/metrics", metrics);
}
