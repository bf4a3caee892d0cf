import https from "node:https";
import { rootCertificates } from "node:tls";
import { http } from "../../../runtime/node-http.js";
import { ChartPullError } from "./errors.js";

export interface FetchOptions {
  allowHttp: boolean;
  /** Extra trusted CA certificates (PEM), added to Node's defaults. */
  ca?: string;
  maxBytes: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const MAX_REDIRECTS = 3;

/** `url` without query and fragment, for messages (a signed URL's query may be a credential). */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * GETs a URL into memory: https only unless allowed (also for every redirect), bounded in size and
 * time. A missing file (404) answers undefined, so callers can say which file was missing.
 */
export async function fetchBytes(url: URL, opts: FetchOptions, redirects = 0): Promise<Buffer | undefined> {
  if (url.protocol === "http:" && !opts.allowHttp)
    throw new ChartPullError(`${displayUrl(url)}: http:// is refused unless DYNAMIC_CHART_ALLOW_HTTP=true`);
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ChartPullError(`${displayUrl(url)}: unsupported scheme ${url.protocol}`);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  return new Promise<Buffer | undefined>((resolve, reject) => {
    const get = url.protocol === "https:" ? https.get : http.get;
    // Passing `ca` replaces Node's roots, so they are kept next to the extra CA.
    const ca = opts.ca ? [...rootCertificates, opts.ca] : undefined;
    const req = get(url, { timeout: timeoutMs, signal: opts.signal, ...(ca ? { ca } : {}) }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        if (redirects >= MAX_REDIRECTS) {
          reject(new ChartPullError(`${displayUrl(url)}: too many redirects`));
          return;
        }
        fetchBytes(new URL(res.headers.location, url), opts, redirects + 1).then(resolve, reject);
        return;
      }
      if (status === 404) {
        res.resume();
        resolve(undefined);
        return;
      }
      if (status !== 200) {
        res.resume();
        reject(new ChartPullError(`${displayUrl(url)}: the repository answered HTTP ${status}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (b: Buffer) => {
        size += b.length;
        if (size > opts.maxBytes) {
          req.destroy(new ChartPullError(`${displayUrl(url)}: larger than ${opts.maxBytes} bytes`));
          return;
        }
        chunks.push(b);
      });
      res.on("end", () => resolve(Buffer.concat(chunks)));
      res.on("error", reject);
    });
    req.on("timeout", () =>
      req.destroy(
        new ChartPullError(`${displayUrl(url)}: no answer within ${Math.round(timeoutMs / 1000)} s`),
      ),
    );
    req.on("error", (e) =>
      reject(e instanceof ChartPullError ? e : new ChartPullError(`${displayUrl(url)}: ${e.message}`)),
    );
  });
}
