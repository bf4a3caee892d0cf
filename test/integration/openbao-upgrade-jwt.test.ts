import assert from "node:assert/strict";
import { createPublicKey, type JsonWebKey } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { SECRET, SERVICE_ACCOUNT } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { forgetUpgradeLogin, upgradeToken } from "../../src/targets/openbao/adminops/upgrade/core/token.js";
import { BaoClient } from "../../src/targets/openbao/baoclient/client.js";
import { type DevOpenBao, startDevOpenBao } from "../../src/testenv/baodev.js";
import { baoCall } from "../../src/testenv/baohttp.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";

// spec.upgrade.jwtAuthRole against the real API server (TokenRequest) and a real OpenBao whose JWT
// auth trusts that API server's ServiceAccount signing key, as a cluster's OpenBao would. The node
// test (openbao-upgrade-rolling.test.ts) rolls a cluster with it; this file pins down the login:
// which ServiceAccount, which audience, the order of the token sources, reuse, and the failure text.

/** The wall clock the upgrade controller injects. */
const clock = () => new Date();

describe("openbao upgrades: the JWT login of spec.upgrade.jwtAuthRole", () => {
  let client: KubeClient;
  let ns: string;
  let bao: DevOpenBao;
  // Every voter address the operator would use goes to the one dev server.
  const access = () => ({
    clusterDomain: "cluster.local",
    baoClient: () => new BaoClient({ address: bao.addr, timeoutMs: 5_000 }),
  });
  const root = (method: string, path: string, body?: unknown) =>
    baoCall(bao.addr, bao.rootToken, method, path, body);
  const cluster = (name: string, upgrade: Record<string, unknown>) =>
    createOpenBaoCluster(client, ns, name, { replicas: 1, tls: { enabled: false }, upgrade });

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "objwt");
    bao = await startDevOpenBao();
    // The API server's signing keys, as OpenBao needs them (PEM), from its own discovery document.
    const jwks = JSON.parse(
      await client.requestText({
        method: "GET",
        path: "/openid/v1/jwks",
        accept: "application/jwk-set+json",
      }),
    ) as { keys: JsonWebKey[] };
    const pems = jwks.keys.map((k) =>
      createPublicKey({ key: k, format: "jwk" }).export({ type: "spki", format: "pem" }),
    );
    await root("POST", "sys/auth/jwt", { type: "jwt" });
    await root("POST", "auth/jwt/config", { jwt_validation_pubkeys: pems, bound_issuer: sharedEnv().issuer });
    await root("PUT", "sys/policies/acl/upgrade-test", {
      policy: 'path "sys/step-down" { capabilities = ["update", "sudo"] }',
    });
    await root("POST", "auth/jwt/role/upgrade", {
      role_type: "jwt",
      bound_audiences: ["openbao-internal"],
      user_claim: "sub",
      bound_subject: `system:serviceaccount:${ns}:bao-upgrade-serviceaccount`,
      token_policies: ["upgrade-test"],
      token_ttl: "10m",
    });
  });
  after(async () => {
    await bao?.stop();
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("logs in as the cluster's upgrade ServiceAccount, creates it owned by the cluster, and reuses the token", async () => {
    const c = await cluster("bao", { jwtAuthRole: "upgrade" });
    const token = await upgradeToken(client, access(), c, clock);
    assert.ok(token);
    const self = (await baoCall(bao.addr, token, "GET", "auth/token/lookup-self")) as {
      data: { policies: string[]; meta?: Record<string, string> };
    };
    assert.ok(self.data.policies.includes("upgrade-test"), JSON.stringify(self.data.policies));
    const sa = await client.get<KubeObject>(SERVICE_ACCOUNT, "bao-upgrade-serviceaccount", ns);
    assert.equal(sa.metadata.ownerReferences?.[0]?.uid, c.metadata.uid);
    assert.equal((sa as { automountServiceAccountToken?: boolean }).automountServiceAccountToken, false);

    assert.equal(await upgradeToken(client, access(), c, clock), token, "reused while it lives");
    forgetUpgradeLogin(c);
    const again = await upgradeToken(client, access(), c, clock);
    assert.ok(again && again !== token, "a new login after a failed step");
  });

  it("a role OpenBao refuses fails with the role and OpenBao's answer, never a token", async () => {
    const c = await cluster("other", { jwtAuthRole: "nope" });
    await assert.rejects(upgradeToken(client, access(), c, clock), (e: Error) => {
      assert.match(e.message, /^spec\.upgrade\.jwtAuthRole: JWT login as "nope" to other failed: .*HTTP 400/);
      assert.doesNotMatch(e.message, /eyJ/, "no JWT in the message");
      return true;
    });
  });

  it("spec.upgrade.tokenSecretRef is refused as upstream refuses it; one stored before comes first; without either, the root-token Secret", async () => {
    await assert.rejects(
      cluster("both", { jwtAuthRole: "nope", tokenSecretRef: { name: "mine" } }),
      (e: Error) => {
        assert.match(e.message, /spec\.upgrade\.tokenSecretRef is not supported/);
        assert.match(e.message, /spec\.upgrade\.jwtAuthRole/, "names the replacement");
        return true;
      },
    );
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "mine", namespace: ns },
      stringData: { token: "from-secret" },
    } as KubeObject);
    // An object stored before the rule existed keeps its value (validation ratcheting); the upgrade
    // still reads it, ahead of the JWT role, as it did then.
    const stored = await cluster("stored", { jwtAuthRole: "nope" });
    const before = {
      ...stored,
      spec: { ...stored.spec, upgrade: { ...stored.spec.upgrade, tokenSecretRef: { name: "mine" } } },
    };
    assert.equal(await upgradeToken(client, access(), before, clock), "from-secret");
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "plain-root-token", namespace: ns },
      stringData: { token: "root" },
    } as KubeObject);
    const plain: OpenBaoCluster = await cluster("plain", {});
    assert.equal(await upgradeToken(client, access(), plain, clock), "root");
  });
});
