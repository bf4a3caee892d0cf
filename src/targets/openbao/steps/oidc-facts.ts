/**
 * What selfInit.oidc's bootstrap needs from outside the spec: the API server's ServiceAccount issuer
 * and its signing keys (read from the API server's own discovery endpoints, which every
 * ServiceAccount may read), and the operator's own ServiceAccount when it runs in a pod.
 *
 * The keys are written into OpenBao's JWT config as PEM (jwt_validation_pubkeys) rather than as a
 * discovery URL: a pod cannot read the issuer's JWKS anonymously, and OpenBao then needs no route to
 * the API server at all. The cost is that a rotated signing key needs the JWT config updated by hand
 * (docs/openbaocluster.md says so).
 *
 * Read only while a self-initializing cluster is not yet initialized (afterwards the request file is
 * inert), and kept for a few minutes, so passes in a burst ask once.
 */
import { createPublicKey, type JsonWebKey } from "node:crypto";
import { readFileSync } from "node:fs";
import type { KubeClient } from "../../../runtime/client.js";
import type { OidcBootstrapFacts } from "../workload/config/oidc-bootstrap.js";

const KEEP_MS = 5 * 60_000;
const cache = new Map<string, { facts: OidcBootstrapFacts; until: number }>();

/** Where a pod's ServiceAccount token is mounted; its `sub` claim names the operator's identity. */
const IN_CLUSTER_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

export async function readOidcFacts(
  client: KubeClient,
  now: number,
  signal?: AbortSignal,
  /** The operator's ServiceAccount as configured (outside a pod); else its own token tells. */
  configured?: { namespace: string; name: string },
): Promise<OidcBootstrapFacts> {
  const key = client.serverUrl;
  const hit = cache.get(key);
  if (hit && hit.until > now) return hit.facts;
  const discovery = await client.request<{ issuer?: unknown }>({
    method: "GET",
    path: "/.well-known/openid-configuration",
    signal,
  });
  if (typeof discovery?.issuer !== "string" || discovery.issuer === "")
    throw new Error("the API server's /.well-known/openid-configuration names no issuer");
  // The API server offers the key set only as its own media type (406 for application/json).
  const jwks = await client.request<{ keys?: unknown }>({
    method: "GET",
    path: "/openid/v1/jwks",
    accept: "application/jwk-set+json",
    signal,
  });
  const facts: OidcBootstrapFacts = {
    issuer: discovery.issuer,
    publicKeysPem: publicKeysPem(jwks?.keys),
    ...(configured ? { operatorSubject: serviceAccountSubject(configured) } : operatorSubject()),
  };
  cache.set(key, { facts, until: now + KEEP_MS });
  return facts;
}

/** The JWKS's signing keys as PEM public keys, sorted so the rendered file does not depend on order. */
export function publicKeysPem(keys: unknown): string[] {
  if (!Array.isArray(keys) || keys.length === 0)
    throw new Error("the API server's /openid/v1/jwks holds no key");
  const pems = keys.map((k, i) => {
    try {
      return createPublicKey({ key: k as JsonWebKey, format: "jwk" })
        .export({ type: "spki", format: "pem" })
        .toString();
    } catch (e) {
      throw new Error(
        `the API server's /openid/v1/jwks key ${i} is not a public key: ${(e as Error).message}`,
      );
    }
  });
  return [...new Set(pems)].sort();
}

/** The operator's `system:serviceaccount:<ns>:<name>` from its own token's `sub` claim; {} outside a pod. */
export function operatorSubject(tokenFile = IN_CLUSTER_TOKEN): { operatorSubject?: string } {
  let token: string;
  try {
    token = readFileSync(tokenFile, "utf8").trim();
  } catch {
    return {};
  }
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as {
      sub?: unknown;
    };
    return typeof payload.sub === "string" && payload.sub.startsWith("system:serviceaccount:")
      ? { operatorSubject: payload.sub }
      : {};
  } catch {
    // Not a JWT: the token itself is never quoted.
    return {};
  }
}

/** `system:serviceaccount:<namespace>:<name>`, as a ServiceAccount token's `sub` names it. */
export const serviceAccountSubject = (sa: { namespace: string; name: string }): string =>
  `system:serviceaccount:${sa.namespace}:${sa.name}`;

/** The reverse of serviceAccountSubject; undefined for anything else. */
export function subjectServiceAccount(sub: string): { namespace: string; name: string } | undefined {
  const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(sub);
  return m ? { namespace: m[1]!, name: m[2]! } : undefined;
}

/** Tests: forget what was read. */
export function forgetOidcFacts(): void {
  cache.clear();
}
