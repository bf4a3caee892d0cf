/**
 * `spec.plugins[].env`: `NAME=value` strings OpenBao hands to a plugin's process. Upstream's schema
 * has no way to take them from a Secret, and OpenBao reads them only from config.hcl, so the only
 * place they can stay out of a ConfigMap is the file itself: a cluster whose plugins get any
 * environment keeps its config.hcl in a Secret. Any, not only those named like credentials: a value
 * such as a database URL can carry a password under a harmless name.
 */
import type { SpecView } from "./spec-view.js";

// The last word of a variable name that says its value is a credential (GITHUB_TOKEN, DB_PASSWORD,
// AWS_SECRET_ACCESS_KEY, SIGNING_PRIVATE_KEY); the last word only, so TOKEN_TTL or PIN_LENGTH are
// settings, not credentials.
const CREDENTIAL_WORD = /(?:^|_)(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PIN|CREDENTIALS?|JWT)$/;
const CREDENTIAL_KEY = /(?:^|_)(?:SECRET|PRIVATE|ACCESS|API|SIGNING|ENCRYPTION)_?KEY$/;

/** Whether any declared plugin is given environment variables. */
export function pluginEnvGiven(spec: SpecView): boolean {
  return pluginEnvEntries(spec).length > 0;
}

/**
 * `plugins[i].env[j]` fields whose variable is named like a credential: written into the spec,
 * they are readable by anyone who may read the cluster object (the SecurityRisk condition; the
 * Hardened profile refuses them). Field paths only, never a value.
 */
export function pluginEnvCredentials(spec: SpecView): string[] {
  return pluginEnvEntries(spec)
    .filter((e) => isCredentialName(e.name))
    .map((e) => e.field);
}

/** Whether an environment variable's name says it holds a credential. */
export function isCredentialName(name: string): boolean {
  const n = name.toUpperCase().replace(/-/g, "_");
  return CREDENTIAL_WORD.test(n) || CREDENTIAL_KEY.test(n);
}

function pluginEnvEntries(spec: SpecView): { field: string; name: string }[] {
  const plugins = Array.isArray(spec.plugins) ? spec.plugins : [];
  const out: { field: string; name: string }[] = [];
  plugins.forEach((p, i) => {
    const env = p && typeof p === "object" && Array.isArray(p.env) ? p.env : [];
    env.forEach((entry, j) => {
      if (typeof entry !== "string" || entry === "") return;
      const eq = entry.indexOf("=");
      out.push({ field: `plugins[${i}].env[${j}]`, name: eq < 0 ? entry : entry.slice(0, eq) });
    });
  });
  return out;
}
