import type { Manager } from "./manager.js";

/** A problem found by an offline check: one line of `validate` output. */
export interface ManifestProblem {
  file: string;
  /** `namespace/name` (or `name`) of the object, when the problem belongs to one. */
  object?: string;
  key?: string;
  message: string;
}

/** One parsed YAML/JSON document and the file it came from. */
export interface ManifestDocument {
  file: string;
  doc: unknown;
}

/** A configuration value that is wrong; `field` is the dotted path inside the config file. */
export class ConfigError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = "ConfigError";
  }
}

/**
 * What a target plugs into the process: how to read its configuration section, how to wire its
 * controllers into its own manager, and its offline manifest checks. The runtime knows nothing
 * else of it.
 */
export interface TargetDefinition<C = unknown> {
  name: string;
  /** Parses and checks the target's configuration section; throws ConfigError naming the field. */
  parseConfig(raw: unknown, field: string): C;
  /** Registers informers and controllers on the manager. Called before the manager starts. */
  setup(manager: Manager, config: C): Promise<void>;
  /** Offline checks for the target's kinds; other kinds' documents are ignored. */
  validate?(docs: ManifestDocument[]): ManifestProblem[];
  /** Closes backend connections, timers. */
  close?(): Promise<void>;
}
