import type https from "node:https";
import { dirname, isAbsolute, resolve } from "node:path";
import type { Kubeconfig } from "./kubeconfig-model.js";
import type { Credentials, RequestAuth } from "./types.js";

/**
 * How long one answer is reused. The library caches an exec credential until its own expiry, so
 * asking again is cheap; a short reuse keeps an expired token from being sent for long.
 */
const REFRESH_MS = 10_000;

const PATH_FIELDS = ["certificate-authority", "client-certificate", "client-key", "tokenFile"];

interface Options {
  config: Kubeconfig;
  contextName: string;
  server: string;
  source: string;
}

/**
 * Exec plugins (cloud CLIs, kubelogin...) and legacy auth providers (oidc, azure, gcp), through
 * @kubernetes/client-node: it implements their protocols the way kubectl does, and we would only
 * repeat it. The library and its generated API cost about 65 MiB of RSS, so it is imported on the
 * first request that needs it and never by a process using certificates or tokens.
 */
export class ClientNodeCredentials implements Credentials {
  readonly server: string;
  readonly source: string;
  private loaded?: Promise<{ applyToHTTPSOptions(o: https.RequestOptions): Promise<void> }>;
  private cached?: { auth: RequestAuth; at: number };

  constructor(private readonly opts: Options) {
    this.server = opts.server;
    this.source = opts.source;
  }

  async requestAuth(): Promise<RequestAuth> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < REFRESH_MS) return this.cached.auth;
    this.loaded ??= this.load().catch((e) => {
      this.loaded = undefined;
      throw e;
    });
    const kc = await this.loaded;
    const options: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(options);
    const auth: RequestAuth = {
      headers: options.headers ?? {},
      ca: options.ca,
      cert: options.cert,
      key: options.key,
      rejectUnauthorized: options.rejectUnauthorized,
      servername: options.servername,
    };
    this.cached = { auth, at: now };
    return auth;
  }

  private async load() {
    const { KubeConfig } = await import("@kubernetes/client-node");
    const kc = new KubeConfig();
    kc.loadFromString(JSON.stringify(toDocument(this.opts.config)));
    kc.setCurrentContext(this.opts.contextName);
    return kc;
  }
}

/** The merged configuration as one kubeconfig document, with file paths made absolute. */
function toDocument(config: Kubeconfig): Record<string, unknown> {
  const list = (entries: Kubeconfig["clusters"], inner: string) =>
    [...entries.values()].map((e) => {
      const fields: Record<string, unknown> = { ...e.fields };
      for (const f of PATH_FIELDS) {
        const v = fields[f];
        if (typeof v === "string" && v && !isAbsolute(v)) fields[f] = resolve(dirname(e.file), v);
      }
      return { name: e.name, [inner]: fields };
    });
  return {
    apiVersion: "v1",
    kind: "Config",
    clusters: list(config.clusters, "cluster"),
    users: list(config.users, "user"),
    contexts: list(config.contexts, "context"),
    "current-context": config.currentContext,
  };
}
