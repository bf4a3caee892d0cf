import type { Credentials, RequestAuth } from "../../src/runtime/credentials/index.js";

/** Credentials built in memory for tests: a server, an optional CA and an optional bearer token. */
export function staticCredentials(opts: { server: string; caPem?: string; token?: string }): Credentials {
  return {
    server: opts.server,
    source: "test credentials",
    async requestAuth(): Promise<RequestAuth> {
      return {
        ca: opts.caPem,
        headers: opts.token ? { Authorization: `Bearer ${opts.token}` } : {},
      };
    },
  };
}

/** The same authentication as `base`, sent to another server URL (a proxy the test controls). */
export function redirectedCredentials(base: Credentials, server: string): Credentials {
  return { server, source: `${base.source} via ${server}`, requestAuth: () => base.requestAuth() };
}

/** `base`'s server and CA with a bearer token instead of its own identity. */
export function tokenCredentials(base: Credentials, token: string, server?: string): Credentials {
  return {
    server: server ?? base.server,
    source: "test token",
    async requestAuth(): Promise<RequestAuth> {
      const auth = await base.requestAuth();
      return {
        ca: auth.ca,
        rejectUnauthorized: auth.rejectUnauthorized,
        servername: auth.servername,
        headers: { Authorization: `Bearer ${token}` },
      };
    },
  };
}
