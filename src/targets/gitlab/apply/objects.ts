import { ApiError, errorMessage } from "../../../runtime/errors.js";
import type { KubeObject } from "../../../runtime/types.js";

/** "Kind namespace/name", for messages. */
export function describeObject(o: {
  kind?: string;
  metadata: { name?: string; namespace?: string };
}): string {
  const ns = o.metadata.namespace;
  return `${o.kind ?? "object"} ${ns ? `${ns}/` : ""}${o.metadata.name ?? "(no name)"}`;
}

/**
 * An API error's text for status, events and logs. The server's message can quote the values it
 * refused, so for a Secret only the status code and reason are kept.
 */
export function redactedError(o: KubeObject | { kind?: string }, e: unknown): string {
  if (o.kind === "Secret") {
    if (e instanceof ApiError)
      return `HTTP ${e.code}${e.reason ? ` ${e.reason}` : ""} (message withheld: Secret)`;
    return "request failed (message withheld: Secret)";
  }
  return errorMessage(e);
}
