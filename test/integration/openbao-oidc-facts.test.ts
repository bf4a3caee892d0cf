import assert from "node:assert/strict";
import { verify } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { forgetOidcFacts, readOidcFacts } from "../../src/targets/openbao/steps/oidc-facts.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";

// What selfInit.oidc's bootstrap reads from the real API server: its ServiceAccount issuer and the
// keys its tokens are signed with. Proven by checking a real projected-style token (TokenRequest,
// audience openbao-internal) against what was read, as OpenBao's JWT auth will.

describe("selfInit.oidc: the API server's issuer and keys, read from the real API server", () => {
  let client: KubeClient;
  let ns: string;
  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "ot-oidc");
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
    client.close();
  });

  it("names the configured issuer, and a ServiceAccount token verifies with one of the keys", async () => {
    forgetOidcFacts();
    const facts = await readOidcFacts(client, Date.now());
    assert.equal(facts.issuer, sharedEnv().issuer);
    assert.ok(facts.publicKeysPem.length >= 1);

    await client.apply(
      SERVICE_ACCOUNT,
      {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "bao-backup-serviceaccount", namespace: ns },
      },
      { fieldManager: "test-setup", force: true },
    );
    const answer = await client.request<{ status?: { token?: string } }>({
      method: "POST",
      path: client.resourcePath(SERVICE_ACCOUNT, ns, "bao-backup-serviceaccount", "token"),
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: ["openbao-internal"], expirationSeconds: 600 },
      },
    });
    const [head, body, sig] = answer.status!.token!.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    assert.equal(claims.iss, facts.issuer, "the tokens carry the issuer the bootstrap binds");
    assert.equal(claims.sub, `system:serviceaccount:${ns}:bao-backup-serviceaccount`);
    const alg = JSON.parse(Buffer.from(head, "base64url").toString("utf8")).alg as string;
    assert.match(alg, /^(RS|ES)256$/);
    // JWTs carry ECDSA signatures as r||s (IEEE P1363), not DER.
    const verified = facts.publicKeysPem.some((pem) =>
      verify(
        "sha256",
        Buffer.from(`${head}.${body}`),
        { key: pem, dsaEncoding: "ieee-p1363" },
        Buffer.from(sig, "base64url"),
      ),
    );
    assert.ok(verified, "the token's signature verifies with a key the bootstrap writes");
  });
});
