/**
 * Which credentials a spec writes inline, and whether the rendered config.hcl must therefore be a
 * Secret: the seal's (seal.ts) and the plugins' environment (plugin-env.ts) answer for their own
 * part; callers (the validate step, the Hardened check, the config object) ask here, once.
 */
import { pluginEnvCredentials, pluginEnvGiven } from "./plugin-env.js";
import { inlineSealSecrets, sealKeepsCredentialInFile } from "./seal.js";
import type { SpecView } from "./spec-view.js";

/** True when config.hcl holds a value that may be secret, so it is kept in a Secret, not a ConfigMap. */
export function configNeedsSecret(spec: SpecView): boolean {
  return sealKeepsCredentialInFile(spec) || pluginEnvGiven(spec);
}

/** Spec fields (paths under spec, names only) holding credentials written inline. */
export function inlineCredentials(spec: SpecView): string[] {
  return [...inlineSealSecrets(spec), ...pluginEnvCredentials(spec)];
}
