import type https from "node:https";

/**
 * Where the API server is and how to authenticate to it. `requestAuth()` is called before every
 * request and is cheap when nothing changed: implementations cache, and re-read rotating files
 * (ServiceAccount tokens, certificates) only when they change on disk.
 */
export interface Credentials {
  /** The API server's base URL. */
  readonly server: string;
  /** Where these credentials came from, for messages ("in-cluster", "kubeconfig FILE, context X"). */
  readonly source: string;
  /** TLS options and headers (Authorization) for the next request. */
  requestAuth(): Promise<RequestAuth>;
}

export type RequestAuth = Pick<
  https.RequestOptions,
  "headers" | "ca" | "cert" | "key" | "rejectUnauthorized" | "servername"
>;
