import { readFileSync } from "node:fs";
import { request } from "node:https";
import { parse } from "yaml";

export interface KubeCredentials {
  server: string;
  caPem: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  token?: string;
}

export interface KubeResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the harness reads arbitrary API objects
  body: any;
}

/**
 * The few API calls the harness itself makes (namespaces, ServiceAccounts, TokenRequests), kept free
 * of the operator's own client so that a bug there cannot hide behind the harness.
 */
export class KubeHttp {
  constructor(private readonly creds: KubeCredentials) {}

  /** Reads the kubeconfig shapes writeKubeconfig produces: inline CA, client cert or bearer token. */
  static fromKubeconfig(path: string): KubeHttp {
    const config = parse(readFileSync(path, "utf8"));
    const contextName = config["current-context"];
    const context = config.contexts.find((c: { name: string }) => c.name === contextName).context;
    const cluster = config.clusters.find((c: { name: string }) => c.name === context.cluster).cluster;
    const user = config.users.find((u: { name: string }) => u.name === context.user).user;
    const unb64 = (s: string | undefined) => (s ? Buffer.from(s, "base64").toString("utf8") : undefined);
    return new KubeHttp({
      server: cluster.server,
      caPem: unb64(cluster["certificate-authority-data"])!,
      clientCertPem: unb64(user["client-certificate-data"]),
      clientKeyPem: unb64(user["client-key-data"]),
      token: user.token,
    });
  }

  request(method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<KubeResponse> {
    const url = new URL(path, this.creds.server);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: "application/json" };
    if (payload !== undefined) headers["content-type"] = "application/json";
    if (this.creds.token) headers["authorization"] = `Bearer ${this.creds.token}`;
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          headers,
          ca: this.creds.caPem,
          cert: this.creds.clientCertPem,
          key: this.creds.clientKeyPem,
          timeout: timeoutMs,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            try {
              parsed = text === "" ? undefined : JSON.parse(text);
            } catch {
              // Plain-text endpoints such as /readyz.
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${url.pathname} timed out`)));
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** Like request, but a non-2xx answer is an error naming the call and the API's message. */
  async call(method: string, path: string, body?: unknown): Promise<KubeResponse["body"]> {
    const res = await this.request(method, path, body);
    if (res.status < 200 || res.status >= 300) {
      const message = typeof res.body === "object" && res.body ? res.body.message : res.body;
      throw new Error(`${method} ${path}: HTTP ${res.status}: ${message}`);
    }
    return res.body;
  }

  /** Creates `body` at `collectionPath` unless it already exists. */
  async ensure(
    collectionPath: string,
    body: { metadata: { name: string }; [field: string]: unknown },
  ): Promise<void> {
    const res = await this.request("POST", collectionPath, body);
    if (res.status === 409 || (res.status >= 200 && res.status < 300)) return;
    throw new Error(
      `POST ${collectionPath} (${body.metadata.name}): HTTP ${res.status}: ${res.body?.message}`,
    );
  }
}

/** Asks the TokenRequest API for a projected ServiceAccount token with the given audiences. */
export async function requestServiceAccountToken(
  kube: KubeHttp,
  opts: { namespace: string; serviceAccount: string; audiences?: string[]; expirationSeconds?: number },
): Promise<string> {
  const spec: Record<string, unknown> = { expirationSeconds: opts.expirationSeconds ?? 3600 };
  if (opts.audiences) spec["audiences"] = opts.audiences;
  const body = await kube.call(
    "POST",
    `/api/v1/namespaces/${opts.namespace}/serviceaccounts/${opts.serviceAccount}/token`,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec },
  );
  return body.status.token as string;
}

export async function ensureNamespace(kube: KubeHttp, name: string): Promise<void> {
  await kube.ensure("/api/v1/namespaces", { metadata: { name } });
}

export async function ensureServiceAccount(kube: KubeHttp, namespace: string, name: string): Promise<void> {
  await kube.ensure(`/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name } });
}
