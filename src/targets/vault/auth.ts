import { readFile } from "node:fs/promises";
import { SERVICE_ACCOUNT } from "../../runtime/builtin-types.js";
import type { KubeClient } from "../../runtime/client.js";
import { BackendError } from "./backend-errors.js";
import { type BaoHttp, baoErrors, failureFor } from "./bao-http.js";

/** Where the backend token comes from. `invalidate` forces a new login after a refusal. */
export interface TokenSource {
  token(): Promise<string>;
  invalidate(): void;
}

/** A fixed token (development only: a dev-mode root token from the environment). */
export class StaticToken implements TokenSource {
  constructor(private readonly value: string) {}
  token(): Promise<string> {
    return Promise.resolve(this.value);
  }
  invalidate(): void {}
}

/** Produces the ServiceAccount JWT presented at login. */
export type JwtSource = () => Promise<string>;

/** A projected ServiceAccount token file, re-read at every login since the kubelet rotates it. */
export const jwtFromFile =
  (path: string): JwtSource =>
  async () =>
    (await readFile(path, "utf8")).trim();

/**
 * A short-lived token for an audience, from the TokenRequest API: the same kind of token a
 * projected volume holds, for processes that run outside a pod (the local default, tests).
 */
export function jwtFromTokenRequest(
  client: KubeClient,
  namespace: string,
  serviceAccount: string,
  audience: string,
): JwtSource {
  return async () => {
    const res = await client.request<{ status: { token: string } }>({
      method: "POST",
      path: `${client.resourcePath(SERVICE_ACCOUNT, namespace, serviceAccount)}/token`,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: [audience], expirationSeconds: 600 },
      },
    });
    return res.status.token;
  };
}

/**
 * OpenBao's Kubernetes auth method. The token is replaced when two thirds of its TTL have passed,
 * so it never expires under a running reconcile; concurrent callers share one login.
 */
export class KubernetesAuth implements TokenSource {
  private current?: { token: string; renewAt: number };
  private inflight?: Promise<string>;

  constructor(
    private readonly http: BaoHttp,
    private readonly opts: { mount: string; role: string; jwt: JwtSource },
    private readonly now: () => number = Date.now,
  ) {}

  token(): Promise<string> {
    if (this.current && this.now() < this.current.renewAt) return Promise.resolve(this.current.token);
    this.inflight ??= this.login().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  invalidate(): void {
    this.current = undefined;
  }

  private async login(): Promise<string> {
    let jwt: string;
    try {
      jwt = await this.opts.jwt();
    } catch (e) {
      throw new BackendError(
        "forbidden",
        `cannot obtain the ServiceAccount token for login: ${(e as Error).message}`,
      );
    }
    const res = await this.http.request("login", "POST", `/v1/auth/${this.opts.mount}/login`, undefined, {
      role: this.opts.role,
      jwt,
    });
    if (res.status === 400 || res.status === 401 || res.status === 403) {
      // A missing role, a ServiceAccount the role does not bind, a wrong audience: all refusals.
      const reason = baoErrors(res.body);
      throw new BackendError(
        "forbidden",
        `login with role "${this.opts.role}" refused by OpenBao${reason ? `: ${reason}` : ""}`,
        res.status,
      );
    }
    if (res.status !== 200) throw failureFor(`login with role "${this.opts.role}"`, res);
    const auth = (res.body as { auth?: { client_token?: string; lease_duration?: number } }).auth;
    if (!auth?.client_token) throw new BackendError("error", "login answered without a token");
    const ttlMs = Math.max(1, auth.lease_duration ?? 900) * 1000;
    this.current = { token: auth.client_token, renewAt: this.now() + (ttlMs * 2) / 3 };
    return auth.client_token;
  }
}
