import { untilAborted } from "../../runtime/abort.js";
import type { TokenSource } from "./auth.js";
import { BackendError } from "./backend-errors.js";
import { type BaoHttp, type BaoResponse, baoErrors, failureFor } from "./bao-http.js";
import type { MountInfo } from "./mounts.js";

import type { KvState } from "./planner.js";
import type { DataTree } from "./tree.js";

export type { KvState };

export interface KvPath {
  mount: string;
  path: string;
}

/** `<mount>/<path>`: the first segment is the mount. */
export function splitKvPath(full: string): KvPath {
  const i = full.indexOf("/");
  if (i <= 0 || i === full.length - 1)
    throw new BackendError("invalid", `path "${full}" is not <mount>/<path>`);
  return { mount: full.slice(0, i), path: full.slice(i + 1) };
}

const enc = (p: string) => p.split("/").map(encodeURIComponent).join("/");

/**
 * KV v2 operations. A data read carries the version and custom_metadata, so one read is enough
 * to plan a path. A 403 is retried once after a fresh login, because an expired token and a
 * policy refusal answer alike.
 */
export class KvClient {
  constructor(
    private readonly http: BaoHttp,
    private readonly tokens: TokenSource,
  ) {}

  private async call(
    operation: string,
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<BaoResponse> {
    let res = await this.http.request(operation, method, path, await this.token(signal), body, signal);
    if (res.status === 403) {
      this.tokens.invalidate();
      res = await this.http.request(operation, method, path, await this.token(signal), body, signal);
    }
    return res;
  }

  /**
   * A login is shared by every caller waiting for it, so one caller's abort must not cancel it:
   * the caller stops waiting instead, and the login ends on its own (or by its timeout).
   */
  private token(signal?: AbortSignal): Promise<string> {
    return untilAborted(this.tokens.token(), signal);
  }

  async read(full: string, signal?: AbortSignal): Promise<KvState> {
    const { mount, path } = splitKvPath(full);
    const res = await this.call("read", "GET", `/v1/${enc(mount)}/data/${enc(path)}`, undefined, signal);
    const payload = (
      res.body as { data?: { data?: Record<string, unknown> | null; metadata?: KvMeta | null } } | undefined
    )?.data;
    if (res.status === 404) {
      if (/no handler for route/i.test(baoErrors(res.body))) {
        throw new BackendError(
          "no-mount",
          `there is no mount at ${mount}/ (OpenBao: ${baoErrors(res.body)})`,
          404,
        );
      }
      // A soft-deleted latest version answers 404 but still reports the version to CAS against.
      const meta = payload?.metadata;
      if (meta?.version)
        return {
          exists: true,
          version: meta.version,
          data: {},
          customMetadata: meta.custom_metadata ?? {},
          ageMs: ageOf(meta, res),
        };
      return { exists: false, version: 0, data: {}, customMetadata: {} };
    }
    if (res.status !== 200) throw failureFor(`read ${full}`, res);
    return {
      exists: true,
      version: payload?.metadata?.version ?? 0,
      data: (payload?.data ?? {}) as DataTree,
      customMetadata: payload?.metadata?.custom_metadata ?? {},
      ageMs: payload?.metadata ? ageOf(payload.metadata, res) : undefined,
    };
  }

  /**
   * What serves `mount`, from `sys/internal/ui/mounts/<mount>`; undefined when OpenBao will not
   * say (a 403 there means no such mount or nothing granted in it; the KV read tells which). No
   * fresh login on that 403: it is an answer, not an expired token.
   */
  async describeMount(mount: string): Promise<MountInfo | undefined> {
    const res = await this.http.request(
      "mount",
      "GET",
      `/v1/sys/internal/ui/mounts/${enc(mount)}`,
      await this.tokens.token(),
    );
    if (res.status === 403 || res.status === 404 || res.status === 400) return undefined;
    if (res.status !== 200) throw failureFor(`look up the mount ${mount}/`, res);
    const data = (
      res.body as { data?: { type?: unknown; path?: unknown; options?: { version?: unknown } | null } }
    )?.data;
    if (typeof data?.type !== "string" || typeof data.path !== "string") return undefined;
    const version = data.options?.version;
    return { type: data.type, path: data.path, version: typeof version === "string" ? version : undefined };
  }

  /** Writes a new version only if the latest is still `cas` (0: only if the path has none). */
  async write(
    full: string,
    data: Record<string, unknown>,
    cas: number,
    signal?: AbortSignal,
  ): Promise<number> {
    const { mount, path } = splitKvPath(full);
    const body = { options: { cas }, data };
    const res = await this.call("write", "POST", `/v1/${enc(mount)}/data/${enc(path)}`, body, signal);
    if (res.status !== 200) throw failureFor(`write ${full}`, res);
    return (res.body as { data?: { version?: number } }).data?.version ?? cas + 1;
  }

  /** Replaces the whole custom_metadata map; creates no data version. */
  async writeMetadata(
    full: string,
    customMetadata: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<void> {
    const { mount, path } = splitKvPath(full);
    const body = { custom_metadata: customMetadata };
    const res = await this.call("metadata", "POST", `/v1/${enc(mount)}/metadata/${enc(path)}`, body, signal);
    if (res.status !== 204 && res.status !== 200) throw failureFor(`write metadata of ${full}`, res);
  }

  /**
   * A value from OpenBao's password policy `name` (`GET sys/policies/password/<name>/generate`,
   * answering `{data: {password}}`). A missing policy answers 404 "policy does not exist": that is
   * the object's to fix, so it is an invalid request, not an outage.
   */
  async generatePassword(name: string, signal?: AbortSignal): Promise<string> {
    const res = await this.call(
      "policy",
      "GET",
      `/v1/sys/policies/password/${encodeURIComponent(name)}/generate`,
      undefined,
      signal,
    );
    if (res.status === 404 || res.status === 400)
      throw new BackendError(
        "invalid",
        `password policy ${name}: OpenBao: ${baoErrors(res.body) || `HTTP ${res.status}`}`,
        res.status,
      );
    if (res.status !== 200) throw failureFor(`generate from password policy ${name}`, res);
    const password = (res.body as { data?: { password?: unknown } } | undefined)?.data?.password;
    if (typeof password !== "string" || password === "")
      throw new BackendError("error", `password policy ${name}: OpenBao answered without a password`);
    return password;
  }

  /** Removes the path with every version. */
  async deleteAll(full: string, signal?: AbortSignal): Promise<void> {
    const { mount, path } = splitKvPath(full);
    const res = await this.call(
      "delete",
      "DELETE",
      `/v1/${enc(mount)}/metadata/${enc(path)}`,
      undefined,
      signal,
    );
    if (res.status !== 204 && res.status !== 200 && res.status !== 404)
      throw failureFor(`delete ${full}`, res);
  }
}

interface KvMeta {
  version?: number;
  created_time?: string;
  custom_metadata?: Record<string, string> | null;
}

/** The latest version's age by OpenBao's clock (its Date header has whole seconds: rounded down to 0). */
function ageOf(meta: KvMeta, res: BaoResponse): number | undefined {
  const created = Date.parse(meta.created_time ?? "");
  const now = Date.parse(res.date ?? "");
  if (Number.isNaN(created) || Number.isNaN(now)) return undefined;
  return Math.max(0, now - created);
}
