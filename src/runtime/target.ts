import type { Manager } from "./manager.js";

/** Where a manifest document sits: its file, its position among the file's documents, its first line. */
export interface ManifestPlace {
  file: string;
  /** 1-based position of the YAML document in its file (a List's items share their document's). */
  document?: number;
  /** 1-based line where the object starts. */
  line?: number;
}

/** A problem found by an offline check: one line of `validate` output. */
export interface ManifestProblem extends ManifestPlace {
  /** `namespace/name` (or `name`) of the object, when the problem belongs to one. */
  object?: string;
  key?: string;
  message: string;
  /**
   * "warning": what the object may meet later (a backend's limit, a check that could not run) but
   * that does not make it invalid; `validate` prints it and still exits 0.
   */
  severity?: "warning";
}

/** One parsed YAML/JSON document and where it came from. */
export interface ManifestDocument extends ManifestPlace {
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
