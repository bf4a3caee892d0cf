export interface BaoEndpoint {
  addr: string;
  rootToken: string;
}

export interface BaoResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: OpenBao answers vary per endpoint
  body: any;
}

/** One OpenBao HTTP API call; `token` may be omitted for unauthenticated endpoints. */
export async function baoRequest(
  addr: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<BaoResponse> {
  const headers: Record<string, string> = {};
  if (opts.token) headers["x-vault-token"] = opts.token;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${addr}/v1/${path.replace(/^\//, "")}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body };
}

/** Like baoRequest, but anything but 2xx is an error carrying OpenBao's own error strings. */
export async function baoCall(
  addr: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<BaoResponse["body"]> {
  const res = await baoRequest(addr, method, path, { token, body });
  if (res.status < 200 || res.status >= 300) {
    const errors = Array.isArray(res.body?.errors) ? res.body.errors.join("; ") : String(res.body ?? "");
    throw new Error(`${method} /v1/${path}: HTTP ${res.status}: ${errors}`);
  }
  return res.body;
}

/** /sys/health status: 200 active, 429 standby, 472/473 DR/perf standby, 501 uninitialised, 503 sealed. */
export async function baoHealth(addr: string): Promise<number> {
  const res = await baoRequest(addr, "GET", "sys/health", { timeoutMs: 2000 });
  return res.status;
}
