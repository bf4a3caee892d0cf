/**
 * A spec value the renderer cannot turn into configuration. The message names the field and the
 * problem, never the value, since values may be secret (seal credentials, request bodies).
 */
export class ConfigError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = "ConfigError";
  }
}
