import { type Logger, pino } from "pino";

export type { Logger };

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
  };
  return opts.stream ? pino(options, opts.stream) : pino(options);
}

/** A logger that drops everything, for tests and benchmarks that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
