import type * as Http from "node:http";
import { createRequire } from "node:module";

/**
 * `node:http`, required rather than imported. An ESM import of a built-in reads every export to
 * build its namespace, and on Node 24 that includes `http.WebSocket`, a getter that loads the
 * bundled undici (fetch, WebSocket): measured, 14.4 MiB more RSS than requiring the module (2.0
 * MiB), in a process that never uses either. Type-only imports of `node:http` cost nothing.
 */
export const http: typeof Http = createRequire(import.meta.url)("node:http");
