import { Transform } from "node:stream";

const LEVEL_COLOURS: Record<string, string> = {
  trace: "90",
  debug: "90",
  info: "36",
  warn: "33",
  error: "31",
  fatal: "31",
};
const SKIP = new Set(["level", "time", "msg"]);

/**
 * Turns the operator's JSON log lines into one readable line each, for the local default only;
 * `run` keeps JSON for log collectors.
 */
export function prettyLines(colour = process.stdout.isTTY): Transform {
  let buffered = "";
  return new Transform({
    transform(chunk, _enc, cb) {
      buffered += String(chunk);
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      cb(null, lines.map((l) => `${formatLine(l, colour)}\n`).join(""));
    },
  });
}

export function formatLine(line: string, colour = false): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = String(rec["level"] ?? "info");
  const time = String(rec["time"] ?? "").slice(11, 19);
  const fields = Object.entries(rec)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  const tag = level.toUpperCase().padEnd(5);
  const shown = colour ? `\u001b[${LEVEL_COLOURS[level] ?? "0"}m${tag}\u001b[0m` : tag;
  return `${time} ${shown} ${String(rec["msg"] ?? "")}${fields ? `  ${fields}` : ""}`;
}
