import { type Logger, pino } from "pino";
import { isoTime } from "./utc-time.js";

export type { Logger };

/**
 * Field names that carry credentials or secret values wherever they appear in a logged object, at
 * any depth (compared case-insensitively, with `-` and `_` ignored, so `client_secret`,
 * `clientSecret` and `Client-Secret` are one name). Callers never log them on purpose; this is the
 * net under a mistake, e.g. a whole request, config section, init response or backend answer passed
 * to a logger.
 */
export const SECRET_FIELDS: readonly string[] = [
  // Tokens of every kind: OpenBao's root token and client tokens, bearer and session tokens.
  "token",
  "root_token",
  "developmentToken",
  "accessToken",
  "clientToken",
  "sessionToken",
  "refreshToken",
  "idToken",
  "jwt",
  "bearer",
  "authorization",
  "cookie",
  "set-cookie",
  "x-vault-token",
  // Unseal and recovery keys as `bao operator init` answers them.
  "keys",
  "keys_base64",
  "recovery_keys",
  "recovery_keys_base64",
  "unseal_key",
  // Passwords, client secrets, cloud keys, PINs.
  "password",
  "passphrase",
  "secret",
  "secret_key",
  "secretAccessKey",
  "access_key",
  "accessKeyId",
  "client_secret",
  "secret_id",
  "pin",
  "privateKey",
  "private_key",
  "tls_client_key",
  "credentials",
  "license",
  // Payloads: a KV secret's data, a Secret's data, chart values.
  "data",
  "stringData",
  "value",
  "values",
];

const normalise = (k: string): string => k.toLowerCase().replace(/[-_]/g, "");
const SECRET_KEYS = new Set(SECRET_FIELDS.map(normalise));
export const CENSOR = "[redacted]";
/**
 * How deep the net looks. Deeper than anything the operator logs on purpose; what lies below is
 * replaced whole, so a hostile or cyclic tree costs bounded time and cannot smuggle a value past.
 */
export const REDACT_DEPTH = 12;
const TOO_DEEP = "[too deep]";

export const isSecretField = (key: string): boolean => SECRET_KEYS.has(normalise(key));

const isPlain = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * A copy of `value` with every field named in {@link SECRET_FIELDS} censored, at any depth up to
 * {@link REDACT_DEPTH}. Plain objects and arrays are walked; anything else (errors, which pino's
 * serializer turns into message and stack, buffers, dates) is kept as it is. The input is never
 * changed.
 */
export function redactTree(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) {
    if (depth >= REDACT_DEPTH) return TOO_DEEP;
    return value.map((v) => redactTree(v, depth + 1));
  }
  if (!isPlain(value)) return value;
  if (depth >= REDACT_DEPTH) return TOO_DEEP;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretField(k) && v !== undefined && v !== null ? CENSOR : redactTree(v, depth + 1);
  }
  return out;
}

/**
 * JSON logs on stdout. Per-object context comes from child loggers
 * (`log.child({ controller, object })`). Nothing secret is ever passed to a logger: callers log
 * key names and counts only. Both each line's object and the bindings of every child go through
 * {@link redactTree}.
 */
export function createLogger(
  opts: { level?: string; name?: string; stream?: NodeJS.WritableStream } = {},
): Logger {
  const options = {
    name: opts.name ?? "platform-operator",
    level: opts.level ?? process.env["LOG_LEVEL"] ?? "info",
    base: undefined,
    // pino's isoTime uses Date#toISOString, which loads ICU's time zone data (utc-time.ts).
    timestamp: () => `,"time":"${isoTime(Date.now())}"`,
    formatters: {
      level: (label: string) => ({ level: label }),
      log: (o: Record<string, unknown>) => redactTree(o) as Record<string, unknown>,
    },
  };
  const logger = opts.stream ? pino(options, opts.stream) : pino(options);
  // pino formats a child's bindings without the formatters above; children inherit this method
  // from the root (they are created from it), so every generation's bindings are censored too.
  const child = logger.child;
  logger.child = function redactedChild(this: Logger, bindings, childOptions) {
    return child.call(this, redactTree(bindings) as typeof bindings, childOptions);
  } as typeof logger.child;
  return logger;
}

/** A logger that drops everything, for tests and benchmarks that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
