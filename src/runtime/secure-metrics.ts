import { createHash } from "node:crypto";
import type { KubeClient } from "./client.js";
import { errorMessage } from "./errors.js";
import type { Logger } from "./log.js";
import type { ResourceType } from "./types.js";

const TOKEN_REVIEWS: ResourceType = {
  group: "authentication.k8s.io",
  version: "v1",
  kind: "TokenReview",
  plural: "tokenreviews",
  namespaced: false,
};
const SUBJECT_ACCESS_REVIEWS: ResourceType = {
  group: "authorization.k8s.io",
  version: "v1",
  kind: "SubjectAccessReview",
  plural: "subjectaccessreviews",
  namespaced: false,
};

export type AccessDecision = { status: 200 } | { status: 401 | 403 | 503; reason: string };

export interface MetricsAuthorizerOptions {
  /** The non-resource URL the caller must be allowed to `get`. Default "/metrics". */
  path?: string;
  /** How long an allowed caller is remembered. Default 60 s. */
  allowedTtlMs?: number;
  /** How long a refused caller is remembered (short: a new RoleBinding should count soon). Default 10 s. */
  deniedTtlMs?: number;
  /** Tokens remembered at once. Default 1024. */
  maxEntries?: number;
  log?: Logger;
}

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  error?: string;
}

/**
 * Authentication and authorization for /metrics through the API server, as controller-runtime's
 * secure metrics do: the caller's bearer token goes to a TokenReview, and the user it names must
 * be allowed `get` on the non-resource URL /metrics by a SubjectAccessReview (RBAC:
 * `nonResourceURLs: ["/metrics"], verbs: ["get"]`). The operator's own ServiceAccount needs
 * `create` on tokenreviews and subjectaccessreviews.
 *
 * Decisions are cached per token hash for a short while, so a scrape every few seconds does not
 * cost two API calls each. Tokens are never logged or kept in clear.
 */
export class MetricsAuthorizer {
  private readonly cache = new Map<string, { decision: AccessDecision; until: number }>();
  private readonly path: string;
  private readonly allowedTtlMs: number;
  private readonly deniedTtlMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: MetricsAuthorizerOptions = {},
  ) {
    this.path = opts.path ?? "/metrics";
    this.allowedTtlMs = opts.allowedTtlMs ?? 60_000;
    this.deniedTtlMs = opts.deniedTtlMs ?? 10_000;
    this.maxEntries = opts.maxEntries ?? 1024;
  }

  /** Decides on an `Authorization` header value. Never throws. */
  async check(authorization: string | undefined): Promise<AccessDecision> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    if (!m) return { status: 401, reason: "a bearer token is required" };
    const token = m[1]!;
    const key = createHash("sha256").update(token).digest("hex");
    const now = performance.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.decision;
    let decision: AccessDecision;
    try {
      decision = await this.review(token);
    } catch (e) {
      // Not cached: the next scrape asks again once the API server answers.
      this.opts.log?.warn({ err: errorMessage(e) }, "metrics: cannot check the caller with the API server");
      return { status: 503, reason: "cannot verify the token with the API server" };
    }
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.delete(key);
    const ttl = decision.status === 200 ? this.allowedTtlMs : this.deniedTtlMs;
    this.cache.set(key, { decision, until: now + ttl });
    return decision;
  }

  private async review(token: string): Promise<AccessDecision> {
    const tr = await this.client.create<{ metadata: object; status?: TokenReviewStatus }>(TOKEN_REVIEWS, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      metadata: {},
      spec: { token },
    });
    const user = tr.status?.user;
    if (!tr.status?.authenticated || !user?.username)
      return { status: 401, reason: "the token is not valid" };
    const sar = await this.client.create<{ metadata: object; status?: { allowed?: boolean } }>(
      SUBJECT_ACCESS_REVIEWS,
      {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        metadata: {},
        spec: {
          user: user.username,
          uid: user.uid,
          groups: user.groups,
          extra: user.extra,
          nonResourceAttributes: { path: this.path, verb: "get" },
        },
      },
    );
    if (sar.status?.allowed) return { status: 200 };
    return { status: 403, reason: `${user.username} may not get ${this.path}` };
  }
}
