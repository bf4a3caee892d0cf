import http from "node:http";
import https from "node:https";
import { BackendError } from "./backend-errors.js";
import { backendLatency, backendRequests } from "./metrics.js";

export interface BaoHttpOptions {
  address: string;
  /** PEM bundle to trust for https addresses; the system store when absent. */
  caPem?: string;
  /** Metric label. */
  target: string;
  timeoutMs?: number;
}

export interface BaoResponse {
  status: number;
  body: unknown;
  /** The Date header: OpenBao's own clock, to age what it returns without trusting ours. */
  date?: string;
}

const CONNECTION_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
]);

/**
 * HTTP to OpenBao/Vault with a keep-alive agent. Every request is counted by operation and
 * outcome. Error messages carry OpenBao's own error strings (which name no values) but never
 * the request body.
 */
export class BaoHttp {
  private readonly url: URL;
  private readonly agent: http.Agent;

  constructor(private readonly opts: BaoHttpOptions) {
    this.url = new URL(opts.address);
    this.agent =
      this.url.protocol === "https:"
        ? new https.Agent({ keepAlive: true, maxSockets: 32, ca: opts.caPem })
        : new http.Agent({ keepAlive: true, maxSockets: 32 });
  }

  async request(
    operation: string,
    method: string,
    path: string,
    token: string | undefined,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<BaoResponse> {
    const started = performance.now();
    let outcome = "error";
    try {
      const res = await this.send(method, path, token, body, signal);
      outcome = outcomeOf(res.status);
      return res;
    } catch (e) {
      // An abort (shutdown, lost leadership) is passed on as it is, not as "backend unavailable":
      // the reconcile must end, not report the backend down and write a status.
      if (signal?.aborted) throw e;
      const code = (e as NodeJS.ErrnoException).code ?? "";
      if (CONNECTION_ERRORS.has(code) || e instanceof TimeoutError) {
        outcome = "unavailable";
        throw new BackendError(
          "unavailable",
          `OpenBao at ${this.url.host} is unreachable (${code || "timeout"})`,
        );
      }
      throw e;
    } finally {
      backendRequests.inc({ target: this.opts.target, operation, outcome });
      backendLatency.observe({ target: this.opts.target, operation }, (performance.now() - started) / 1000);
    }
  }

  private send(
    method: string,
    path: string,
    token: string | undefined,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<BaoResponse> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = { Accept: "application/json" };
    if (token) headers["X-Vault-Token"] = token;
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = Buffer.byteLength(payload);
    }
    const transport = this.url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(
        new URL(path, this.url),
        { method, headers, agent: this.agent, signal },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, date: res.headers.date });
          });
        },
      );
      req.setTimeout(this.opts.timeoutMs ?? 15_000, () => req.destroy(new TimeoutError()));
      req.on("error", reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

class TimeoutError extends Error {}

function outcomeOf(status: number): string {
  if (status >= 200 && status < 300) return "ok";
  if (status === 404) return "not_found";
  if (status === 403 || status === 401) return "forbidden";
  if (status === 400) return "invalid";
  if (status === 429 || status >= 500) return "unavailable";
  return "error";
}

/** OpenBao's `errors` array joined, trimmed of its multi-line decoration. */
export function baoErrors(body: unknown): string {
  const errors = (body as { errors?: unknown[] } | undefined)?.errors;
  if (!Array.isArray(errors) || errors.length === 0) return "";
  return errors
    .map((e) =>
      String(e)
        .replace(/\s+/g, " ")
        .replace(/^\d+ errors? occurred: \* /, "")
        .trim(),
    )
    .join("; ");
}

/** Maps a non-2xx answer to a BackendError with the condition-level meaning. */
export function failureFor(what: string, res: BaoResponse): BackendError {
  const reason = baoErrors(res.body);
  const detail = reason ? `: ${reason}` : "";
  if (res.status === 403 || res.status === 401)
    return new BackendError("forbidden", `${what} refused by OpenBao${detail}`, res.status);
  if (res.status === 429 || res.status >= 500)
    return new BackendError(
      "unavailable",
      `${what}: OpenBao unavailable (HTTP ${res.status})${detail}`,
      res.status,
    );
  if (res.status === 400 && /check-and-set/i.test(reason))
    return new BackendError("conflict", `${what}: the path changed since it was read`, res.status);
  if (res.status === 400)
    return new BackendError("invalid", `${what}: rejected (HTTP 400)${detail}`, res.status);
  return new BackendError("error", `${what}: HTTP ${res.status}${detail}`, res.status);
}
