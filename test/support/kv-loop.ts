import https from "node:https";

// A minimal KV v2 client for upgrade tests, run as its own process inside the node's network (so it
// reaches the cluster's client Service by its DNS name, as an application would). It writes k0, k1,
// ... one after another and reads back an acknowledged key between writes, and asks who leads every
// 500 ms. Each request is one JSON line on stdout: {t, op, ok, k?, err?, leader?}. The test derives
// what it asserts (acknowledged writes, failed-request window, leader changes) from those lines.
// Until the shared load client (test/support/kv-load.ts) exists; then this file goes.
//
// Environment: KV_ADDR (https://host:8200), KV_MOUNT, KV_CA (PEM), KV_TOKEN (never printed).

const addr = new URL(process.env["KV_ADDR"]!);
const mount = process.env["KV_MOUNT"]!;
const ca = process.env["KV_CA"]!;
const token = process.env["KV_TOKEN"]!;
let stopping = false;
process.on("SIGTERM", () => {
  stopping = true;
});

function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        method,
        host: addr.hostname,
        port: addr.port,
        path: `/v1/${path}`,
        ca,
        agent: false,
        timeout: 3000,
        headers: {
          "x-vault-token": token,
          ...(payload
            ? { "content-type": "application/json", "content-length": String(payload.length) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(payload);
  });
}

const emit = (o: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ t: Date.now(), ...o })}\n`);
const why = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 200);

async function leaderLoop(): Promise<void> {
  while (!stopping) {
    try {
      const r = await call("GET", "sys/leader");
      const leader = (r.json as { leader_address?: string } | undefined)?.leader_address ?? "";
      emit({ op: "l", ok: r.status === 200, leader });
    } catch (e) {
      emit({ op: "l", ok: false, err: why(e) });
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function kvLoop(): Promise<void> {
  const acked: number[] = [];
  for (let i = 0; !stopping; i++) {
    try {
      const r = await call("POST", `${mount}/data/k${i}`, { data: { v: String(i) } });
      const ok = r.status === 200;
      if (ok) acked.push(i);
      emit({ op: "w", ok, k: i, ...(ok ? {} : { err: `HTTP ${r.status}` }) });
    } catch (e) {
      emit({ op: "w", ok: false, k: i, err: why(e) });
    }
    if (acked.length) {
      const k = acked[Math.floor(Math.random() * acked.length)]!;
      try {
        const r = await call("GET", `${mount}/data/k${k}`);
        const v = (r.json as { data?: { data?: { v?: string } } } | undefined)?.data?.data?.v;
        emit({
          op: "r",
          ok: r.status === 200 && v === String(k),
          k,
          ...(r.status === 200
            ? v === String(k)
              ? {}
              : { err: `value ${v}` }
            : { err: `HTTP ${r.status}` }),
        });
      } catch (e) {
        emit({ op: "r", ok: false, k, err: why(e) });
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

await Promise.all([leaderLoop(), kvLoop()]);
emit({ op: "end", ok: true });
