import { SECRET } from "./builtin-types.js";
import type { CachedReader } from "./cached-reader.js";
import type { KubeObject } from "./types.js";

/** One key of a Secret object, decoded; undefined when the object or key is missing. */
export function secretText(secret: KubeObject | undefined, key: string): string | undefined {
  const v = (secret as { data?: Record<string, string> } | undefined)?.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, "base64").toString("utf8");
}

/**
 * Reads one key of a Secret, decoded; undefined when the Secret or key is missing. Served from the
 * reader's cache when Secrets of that namespace are watched (a miss is then no request at all).
 */
export async function secretValue(
  reader: Pick<CachedReader, "get">,
  namespace: string,
  name: string,
  key: string,
): Promise<string | undefined> {
  return secretText(await reader.get(SECRET, name, namespace), key);
}
