import { type Logger, pino } from "pino";

export type { Logger };

/**
 * Fields that carry credentials or secret values wherever they appear (top level or one level
 * down, and in HTTP headers). Callers never log them on purpose; this is the net under a mistake,
 * e.g. a whole request, config section or backend response passed to a logger.
 */
const SECRET_FIELDS = [
  "token",
  "developmentToken",
  "accessToken",
  "clientToken",
  "client_token",
  "jwt",
  "password",
  "secret",
  "privateKey",
  "bearer",
  "data",
  "value",
  "values",
];
const SECRET_HEADERS = ["authorization", "cookie", '["x-vault-token"]', '["set-cookie"]'];

export const REDACTED_PATHS: string[] = [
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]),
  ...SECRET_HEADERS.flatMap((h) => {
    const sep = h.startsWith("[") ? "" : ".";
    return [`headers${sep}${h}`, `*.headers${sep}${h}`];
  }),
  "*.auth.developmentToken",
  "*.*.auth.developmentToken",
];

/**
 * JSON logs on stdout. Per-object context comes from child loggers
 * (`log.child({ controller, object })`). Nothing secret is ever passed to a logger: callers log
 * key names and counts only.
 */
export function createLogger(
  opts: { level?: string; name?: string; stream?: NodeJS.WritableStream } = {},
): Logger {
  const options = {
    name: opts.name ?? "platform-operator",
    level: opts.level ?? process.env["LOG_LEVEL"] ?? "info",
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
  };
  return opts.stream ? pino(options, opts.stream) : pino(options);
}

/** A logger that drops everything, for tests and benchmarks that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
