import { startKvLoad } from "./kv-load.js";

// kv-load as a process of its own, for node tests: started inside the node's network (where the
// cluster's Service names resolve and its Service IPs route, as for an application), it runs the
// load until SIGTERM, then reads every acknowledged write back and prints the report. stdout is
// JSON lines: {"acknowledged": n} about once a second, then {"report": KvLoadReport}.
//
// Environment: KV_ADDR (https://host:8200), KV_MOUNT, KV_CA (PEM), KV_TOKEN (never printed).

const env = (k: string): string => {
  const v = process.env[k];
  if (!v) throw new Error(`kv-load-process: ${k} is not set`);
  return v;
};

const load = await startKvLoad({
  addresses: [env("KV_ADDR")],
  mount: env("KV_MOUNT"),
  caPem: env("KV_CA"),
  token: env("KV_TOKEN"),
});
const line = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
const tick = setInterval(() => line({ acknowledged: load.snapshot().writesAcknowledged }), 1000);
line({ acknowledged: 0 });
process.once("SIGTERM", () => {
  clearInterval(tick);
  load
    .stop({ verifyTimeoutMs: 120_000 })
    .then((report) => {
      line({ report });
      process.exit(0);
    })
    .catch((e: unknown) => {
      line({ error: e instanceof Error ? e.message : String(e) });
      process.exit(1);
    });
});
