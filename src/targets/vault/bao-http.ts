import { JsonHttp, JsonHttpError } from "../../runtime/jsonhttp.js";
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
 * HTTP to OpenBao/Vault over kept-alive connections. Every request is counted by operation and
 * outcome. Error messages carry OpenBao's own error strings (which name no values) but never
 * the request body.
 */
export class BaoHttp {
  private readonly http: JsonHttp;

  constructor(private readonly opts: BaoHttpOptions) {
    this.http = new JsonHttp({
      address: opts.address,
      caPem: opts.caPem,
      idleTimeoutMs: opts.timeoutMs ?? 15_000,
      maxSockets: 32,
    });
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
      const res = await this.http.request({
        method,
        path,
        body,
        headers: token ? { "X-Vault-Token": token } : {},
        signal,
      });
      outcome = outcomeOf(res.status);
      return { status: res.status, body: res.body, date: res.headers.date };
    } catch (e) {
      // An abort (shutdown, lost leadership) is passed on as it is, not as "backend unavailable":
      // the reconcile must end, not report the backend down and write a status.
      if (signal?.aborted) throw e;
      if (e instanceof JsonHttpError && (e.failure === "timeout" || CONNECTION_ERRORS.has(e.code ?? ""))) {
        outcome = "unavailable";
        throw new BackendError(
          "unavailable",
          `OpenBao at ${this.http.host} is unreachable (${e.code ?? "timeout"})`,
        );
      }
      throw e;
    } finally {
      backendRequests.inc({ target: this.opts.target, operation, outcome });
      backendLatency.observe({ target: this.opts.target, operation }, (performance.now() - started) / 1000);
    }
  }

  close(): void {
    this.http.close();
  }
}

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
