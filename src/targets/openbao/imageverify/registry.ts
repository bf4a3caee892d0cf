import { createHash } from "node:crypto";
import type { RegistryCredentials } from "./pull-secrets.js";
import { plainHttp } from "./reference.js";

/**
 * The few calls of the OCI distribution API a signature check needs — a manifest by tag or digest
 * and a blob by digest — with the registry's own auth: anonymous, HTTP Basic, or the Bearer token
 * dance (401 with a challenge, a token from the realm, the request again). Every byte that is used
 * is checked against the digest that named it; sizes are capped, so a hostile registry can neither
 * swap content nor exhaust memory.
 */

export type Fetch = typeof fetch;

export const MANIFEST_TYPES = [
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
];
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
const CREDENTIALS_HINT =
  " (the registry wants credentials: name a pull Secret for it in the verification settings' imagePullSecrets)";

/** A failure talking to the registry; `transient` when asking again later may succeed. */
export class RegistryError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

export interface RegistryRepo {
  host: string;
  repository: string;
}

export interface RegistryOptions {
  credentials?: RegistryCredentials;
  fetch?: Fetch;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface Manifest {
  bytes: Buffer;
  /** sha256 of the bytes, computed here (the registry's Docker-Content-Digest is not trusted). */
  digest: string;
}

const sha256 = (b: Buffer): string => `sha256:${createHash("sha256").update(b).digest("hex")}`;

/** One repository on one registry, keeping the Bearer token it was given between calls. */
export class RegistryClient {
  private token: string | undefined;
  private readonly base: string;
  private readonly fetch: Fetch;

  constructor(
    private readonly repo: RegistryRepo,
    private readonly opts: RegistryOptions = {},
  ) {
    this.base = `${plainHttp(repo.host) ? "http" : "https"}://${repo.host}/v2/${repo.repository}`;
    this.fetch = opts.fetch ?? fetch;
  }

  /** The manifest under a tag or digest; undefined when the registry has none (404). */
  async manifest(reference: string): Promise<Manifest | undefined> {
    const res = await this.get(`${this.base}/manifests/${reference}`, { Accept: MANIFEST_TYPES.join(", ") });
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    await this.ok(res, `manifest ${reference}`);
    const bytes = await readCapped(res, MAX_MANIFEST_BYTES, `manifest ${reference}`);
    const digest = sha256(bytes);
    if (reference.startsWith("sha256:") && digest !== reference)
      throw new RegistryError(
        `the registry answered manifest ${reference} with other content (${digest})`,
        false,
      );
    return { bytes, digest };
  }

  /**
   * The referrers API's index for a manifest digest (OCI distribution 1.1); undefined when the
   * registry does not serve the API (404 by the spec; older registries answer 400 or 405 too),
   * so the caller reads the fallback tag instead. The index is a listing, not content-addressed:
   * each manifest it names is fetched by digest and checked.
   */
  async referrers(digest: string): Promise<Buffer | undefined> {
    const res = await this.get(`${this.base}/referrers/${digest}`, {
      Accept: "application/vnd.oci.image.index.v1+json",
    });
    if (res.status === 404 || res.status === 400 || res.status === 405) {
      await res.body?.cancel();
      return undefined;
    }
    await this.ok(res, `referrers of ${digest}`);
    return readCapped(res, MAX_MANIFEST_BYTES, `referrers of ${digest}`);
  }

  /** A blob by digest, at most `maxBytes`, checked against its digest. */
  async blob(digest: string, maxBytes: number): Promise<Buffer> {
    const res = await this.get(`${this.base}/blobs/${digest}`, {});
    await this.ok(res, `blob ${digest}`);
    const bytes = await readCapped(res, maxBytes, `blob ${digest}`);
    if (sha256(bytes) !== digest)
      throw new RegistryError(`the registry answered blob ${digest} with other content`, false);
    return bytes;
  }

  private async ok(res: Response, what: string): Promise<void> {
    if (res.ok) return;
    await res.body?.cancel();
    const transient = res.status >= 500 || res.status === 429;
    const hint = (res.status === 401 || res.status === 403) && !this.opts.credentials ? CREDENTIALS_HINT : "";
    throw new RegistryError(
      `${this.repo.host}/${this.repo.repository} ${what}: HTTP ${res.status}${hint}`,
      transient,
    );
  }

  private async get(url: string, headers: Record<string, string>): Promise<Response> {
    const first = await this.send(url, { ...headers, ...this.authHeader() });
    if (first.status !== 401) return first;
    const challenge = first.headers.get("www-authenticate") ?? "";
    await first.body?.cancel();
    const auth = await this.answer(challenge);
    if (!auth)
      throw new RegistryError(
        `${this.repo.host}/${this.repo.repository}: HTTP 401${this.opts.credentials ? "" : CREDENTIALS_HINT}`,
        false,
      );
    return this.send(url, { ...headers, Authorization: auth });
  }

  private authHeader(): Record<string, string> {
    return this.token ? { Authorization: `Bearer ${this.token}` } : {};
  }

  /** The Authorization a 401's challenge asks for, or undefined when it cannot be met. */
  private async answer(challenge: string): Promise<string | undefined> {
    const creds = this.opts.credentials;
    const basic = creds
      ? `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString("base64")}`
      : undefined;
    const scheme = challenge.split(/\s+/, 1)[0]?.toLowerCase();
    if (scheme === "basic") return basic;
    if (scheme !== "bearer") return undefined;
    const params = challengeParams(challenge);
    const realm = params["realm"];
    if (!realm) return undefined;
    const url = new URL(realm);
    if (params["service"]) url.searchParams.set("service", params["service"]);
    url.searchParams.set("scope", params["scope"] ?? `repository:${this.repo.repository}:pull`);
    const res = await this.send(url.toString(), basic ? { Authorization: basic } : {});
    await this.ok(res, "token");
    const body = JSON.parse((await readCapped(res, 64 * 1024, "token")).toString("utf8")) as {
      token?: string;
      access_token?: string;
    };
    this.token = body.token ?? body.access_token;
    return this.token ? `Bearer ${this.token}` : undefined;
  }

  private async send(url: string, headers: Record<string, string>): Promise<Response> {
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const signal = this.opts.signal ? AbortSignal.any([this.opts.signal, timeout]) : timeout;
    try {
      return await this.fetch(url, { headers, signal, redirect: "follow" });
    } catch (e) {
      if (this.opts.signal?.aborted) throw e;
      const cause = (e as { cause?: { code?: string } }).cause?.code;
      throw new RegistryError(
        `${this.repo.host} did not answer${cause ? ` (${cause})` : timeout.aborted ? " (timed out)" : ""}`,
        true,
      );
    }
  }
}

/** `Bearer realm="…",service="…",scope="…"` → its parameters. */
export function challengeParams(challenge: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of challenge.matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) out[m[1]!.toLowerCase()] = m[2]!;
  return out;
}

async function readCapped(res: Response, max: number, what: string): Promise<Buffer> {
  const declared = Number(res.headers.get("content-length") ?? "NaN");
  if (declared > max) {
    await res.body?.cancel();
    throw new RegistryError(`${what} is larger than ${max} bytes`, false);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw new RegistryError(`${what} is larger than ${max} bytes`, false);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}
