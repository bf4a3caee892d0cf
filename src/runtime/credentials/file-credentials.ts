import type { Credentials, RequestAuth } from "./types.js";
import type { WatchedFile } from "./watched-file.js";

/** A value given inline (kubeconfig *-data, token) or by a file that may rotate. */
export type Source = { inline: Buffer } | { file: WatchedFile };

export interface FileCredentialsSpec {
  server: string;
  source: string;
  ca?: Source;
  cert?: Source;
  key?: Source;
  token?: Source;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
}

const read = (s: Source | undefined): Buffer | undefined =>
  s === undefined ? undefined : "inline" in s ? s.inline : s.file.value;

/**
 * Credentials that need no code beyond reading bytes: CA, client certificate and key, bearer token,
 * each inline or from a file. This covers in-cluster ServiceAccounts and nearly every kubeconfig
 * that is not an exec plugin or auth provider.
 */
export class FileCredentials implements Credentials {
  readonly server: string;
  readonly source: string;
  private readonly files: WatchedFile[];
  private auth: RequestAuth;

  constructor(private readonly spec: FileCredentialsSpec) {
    this.server = spec.server;
    this.source = spec.source;
    this.files = [spec.ca, spec.cert, spec.key, spec.token].flatMap((s) =>
      s !== undefined && "file" in s ? [s.file] : [],
    );
    this.auth = this.build();
  }

  async requestAuth(): Promise<RequestAuth> {
    if (this.files.length === 0) return this.auth;
    const changed = await Promise.all(this.files.map((f) => f.refresh()));
    if (changed.some(Boolean)) this.auth = this.build();
    return this.auth;
  }

  private build(): RequestAuth {
    const auth: RequestAuth = { headers: {} };
    const token = read(this.spec.token)?.toString("utf8").trim();
    if (token) auth.headers = { Authorization: `Bearer ${token}` };
    const ca = read(this.spec.ca);
    if (ca) auth.ca = ca;
    const cert = read(this.spec.cert);
    const key = read(this.spec.key);
    if (cert && key) {
      auth.cert = cert;
      auth.key = key;
    }
    if (this.spec.insecureSkipTlsVerify) auth.rejectUnauthorized = false;
    if (this.spec.tlsServerName) auth.servername = this.spec.tlsServerName;
    return auth;
  }
}
