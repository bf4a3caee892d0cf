import type { ApiRequester } from "./api-request.js";
import { ApiError, errorMessage } from "./errors.js";
import type { ResourceType } from "./types.js";

interface ApiResourceList {
  groupVersion: string;
  resources: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[];
}

interface ApiGroupList {
  groups: { name: string; versions: { groupVersion: string }[] }[];
}

/** No served resource has this kind in this group-version (after discovery was asked again). */
export class NoKindMatchError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(
      `kind ${kind} is not served in ${apiVersion || "(no apiVersion)"}: check apiVersion and kind, ` +
        "or install the CustomResourceDefinition that provides it",
    );
    this.name = "NoKindMatchError";
  }
}

/** Discovery of one group-version failed (e.g. an aggregated API that is down): try again later. */
export class DiscoveryFailedError extends Error {
  constructor(
    readonly groupVersion: string,
    cause: unknown,
  ) {
    super(`discovery of ${groupVersion} failed: ${errorMessage(cause)}`);
    this.name = "DiscoveryFailedError";
  }
}

type KindTable = Map<string, ResourceType>;

/**
 * Maps apiVersion + kind to the REST resource that serves it, from discovery, one group-version at
 * a time and only for the group-versions asked about. A kind that is missing makes the mapper ask
 * the server again (a CRD may have been installed since); a group-version whose discovery fails is
 * an error for that call and is asked again on the next, never remembered as "not served".
 * Concurrent lookups of one group-version share a single request.
 */
export class RestMapper {
  private readonly tables = new Map<string, Promise<KindTable>>();
  /** "apiVersion|kind" found not served, kept only while something watches for new kinds. */
  private readonly misses = new Set<string>();
  private missWatchers = 0;
  /** Bumped by refresh(): a lookup that began before it must not remember its (older) miss. */
  private generation = 0;

  constructor(private readonly client: ApiRequester) {}

  /** Forgets everything learnt, so the next lookups ask the server again. */
  refresh(): void {
    this.tables.clear();
    this.misses.clear();
    this.generation++;
  }

  /**
   * Forgets what was learnt about one API group only (its group-versions and its kinds found
   * missing): a CustomResourceDefinition that appears, changes or goes alters its own group and no
   * other, so the other groups' answers stay and cost no request.
   */
  forgetGroup(group: string): void {
    const ofGroup = (apiVersion: string) =>
      group === "" ? !apiVersion.includes("/") : apiVersion.startsWith(`${group}/`);
    for (const apiVersion of [...this.tables.keys()]) if (ofGroup(apiVersion)) this.tables.delete(apiVersion);
    for (const id of [...this.misses]) if (ofGroup(id.slice(0, id.indexOf("|")))) this.misses.delete(id);
    this.generation++;
  }

  /**
   * Called by whoever watches CustomResourceDefinitions and calls refresh() when one appears,
   * changes or goes: until the returned function is called, a kind found not served is remembered
   * as such instead of asked about again on every lookup.
   */
  keepMisses(): () => void {
    this.missWatchers++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.missWatchers === 0) this.misses.clear();
    };
  }

  /** The resource for apiVersion + kind, or undefined when the server does not serve it. */
  async find(apiVersion: string, kind: string): Promise<ResourceType | undefined> {
    const id = `${apiVersion}|${kind}`;
    // A few tries: CRDs changing without pause must not keep one lookup going.
    for (let attempt = 1; ; attempt++) {
      if (this.missWatchers > 0 && this.misses.has(id)) return undefined;
      const generation = this.generation;
      const found = await this.lookup(apiVersion, kind);
      if (found || this.missWatchers === 0 || attempt === 3) return found;
      if (generation === this.generation) {
        this.misses.add(id);
        return undefined;
      }
      // Discovery was forgotten while this lookup ran: its "missing" may predate the change, so it
      // is asked again rather than either trusted or left unremembered (the next pass would ask).
    }
  }

  private async lookup(apiVersion: string, kind: string): Promise<ResourceType | undefined> {
    const cached = this.tables.get(apiVersion);
    if (cached) {
      // A failed load throws here (and load has already forgotten it, so the next call asks again).
      const hit = (await cached).get(kind);
      if (hit) return hit;
      // A miss: one fresh look, shared with concurrent callers that missed too.
      if (this.tables.get(apiVersion) === cached) this.tables.delete(apiVersion);
    }
    return (await this.load(apiVersion)).get(kind);
  }

  /** Like find, but an unserved kind is a {@link NoKindMatchError} naming it. */
  async mapping(apiVersion: string, kind: string): Promise<ResourceType> {
    const type = await this.find(apiVersion, kind);
    if (!type) throw new NoKindMatchError(apiVersion, kind);
    return type;
  }

  /**
   * The names of the API groups the server serves now (not the core group), asked afresh on every
   * call: nothing is cached, so a group whose CRD appeared a moment ago is in the answer as soon as
   * the server lists it.
   */
  async servedGroups(): Promise<string[]> {
    const groups = await this.client.request<ApiGroupList>({ method: "GET", path: "/apis" });
    return (groups.groups ?? []).map((g) => g.name);
  }

  /** Every served resource of every group-version; group-versions that fail discovery are left out. */
  async all(): Promise<ResourceType[]> {
    const groups = await this.client.request<ApiGroupList>({ method: "GET", path: "/apis" });
    const gvs = ["v1", ...groups.groups.flatMap((g) => g.versions.map((v) => v.groupVersion))];
    const tables = await Promise.all(gvs.map((gv) => this.load(gv).catch(() => undefined)));
    return tables.flatMap((t) => (t ? [...t.values()] : []));
  }

  private load(apiVersion: string): Promise<KindTable> {
    let pending = this.tables.get(apiVersion);
    if (!pending) {
      pending = this.fetch(apiVersion);
      this.tables.set(apiVersion, pending);
      // Only a successful answer that serves something is kept; failures and 404s are asked again.
      pending.then(
        (t) => {
          if (t.size === 0 && this.tables.get(apiVersion) === pending) this.tables.delete(apiVersion);
        },
        () => {
          if (this.tables.get(apiVersion) === pending) this.tables.delete(apiVersion);
        },
      );
    }
    return pending;
  }

  private async fetch(apiVersion: string): Promise<KindTable> {
    const table: KindTable = new Map();
    if (!/^([a-z0-9.-]+\/)?v[0-9a-z]+$/.test(apiVersion)) return table;
    const path = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let list: ApiResourceList;
    try {
      list = await this.client.request<ApiResourceList>({ method: "GET", path });
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return table;
      throw new DiscoveryFailedError(apiVersion, e);
    }
    const slash = apiVersion.indexOf("/");
    const group = slash < 0 ? "" : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    for (const r of list.resources ?? []) {
      if (r.name.includes("/")) continue; // subresources such as deployments/status
      table.set(r.kind, { group, version, kind: r.kind, plural: r.name, namespaced: r.namespaced });
    }
    return table;
  }
}
