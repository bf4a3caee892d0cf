import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { asBool, asObject, asPort, asString } from "../runtime/configvalues.js";
import { ConfigError } from "../runtime/target.js";

/**
 * The process configuration file. Backend addresses and credentials live here (or in the
 * environment, via `${VAR}`), never in the objects the operator reconciles.
 */
export interface ProcessConfig {
  leaderElection: { enabled: boolean; namespace: string; leaseName: string };
  probes: { port: number; host: string };
  logLevel: string;
  /** Raw per-target sections, in file order; each target parses its own. */
  targets: Map<string, unknown>;
}

export function loadConfigFile(path: string): ProcessConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError("--config", `cannot read ${path}: ${(e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parse(expandEnv(text));
  } catch (e) {
    throw new ConfigError(path, `not valid YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  return parseProcessConfig(raw ?? {});
}

/** `${NAME}` becomes the environment variable's value; a missing variable is an error, not "". */
export function expandEnv(text: string, env: NodeJS.ProcessEnv = process.env): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = env[name];
    if (v === undefined) throw new ConfigError(`\${${name}}`, "environment variable is not set");
    return v;
  });
}

export function parseProcessConfig(raw: unknown): ProcessConfig {
  const root = asObject(raw, "(config)");
  const le = asObject(root["leaderElection"] ?? {}, "leaderElection");
  const probes = asObject(root["probes"] ?? {}, "probes");
  const targets = asObject(root["targets"] ?? {}, "targets");
  if (Object.keys(targets).length === 0) throw new ConfigError("targets", "enable at least one target");
  return {
    leaderElection: {
      enabled: asBool(le["enabled"] ?? true, "leaderElection.enabled"),
      namespace: asString(le["namespace"] ?? "platform-operator-system", "leaderElection.namespace"),
      leaseName: asString(le["leaseName"] ?? "platform-operator", "leaderElection.leaseName"),
    },
    probes: {
      port: asPort(probes["port"] ?? 8080, "probes.port"),
      host: asString(probes["host"] ?? "0.0.0.0", "probes.host"),
    },
    logLevel: asString(root["logLevel"] ?? "info", "logLevel"),
    targets: new Map(Object.entries(targets)),
  };
}
