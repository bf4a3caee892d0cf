import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KubernetesAuth } from "../../src/targets/vault/auth.js";
import { BackendError } from "../../src/targets/vault/backend-errors.js";
import type { BaoHttp, BaoResponse } from "../../src/targets/vault/bao-http.js";

/** Stands in for OpenBao's login endpoint: counts logins and answers with a fresh token each time. */
function loginEndpoint(answer: (n: number) => BaoResponse) {
  const calls: { path: string; body: unknown }[] = [];
  const http = {
    async request(_op: string, _method: string, path: string, _token: string | undefined, body?: unknown) {
      calls.push({ path, body });
      return answer(calls.length);
    },
  } as unknown as BaoHttp;
  return { http, calls };
}

describe("KubernetesAuth", () => {
  it("logs in once, reuses the token, and replaces it after two thirds of its TTL", async () => {
    let now = 0;
    const { http, calls } = loginEndpoint((n) => ({
      status: 200,
      body: { auth: { client_token: `t${n}`, lease_duration: 900 } },
    }));
    const auth = new KubernetesAuth(
      http,
      { mount: "kubernetes", role: "r", jwt: async () => "jwt" },
      () => now,
    );
    assert.equal(await auth.token(), "t1");
    now = 599_000;
    assert.equal(await auth.token(), "t1", "still fresh before 600 s");
    now = 600_000;
    assert.equal(await auth.token(), "t2", "renewed at two thirds of 900 s");
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[0], { path: "/v1/auth/kubernetes/login", body: { role: "r", jwt: "jwt" } });
  });

  it("shares one login between concurrent callers and logs in again after invalidate", async () => {
    const { http, calls } = loginEndpoint((n) => ({
      status: 200,
      body: { auth: { client_token: `t${n}`, lease_duration: 60 } },
    }));
    const auth = new KubernetesAuth(http, { mount: "k", role: "r", jwt: async () => "jwt" });
    const tokens = await Promise.all([auth.token(), auth.token(), auth.token()]);
    assert.deepEqual(tokens, ["t1", "t1", "t1"]);
    auth.invalidate();
    assert.equal(await auth.token(), "t2");
    assert.equal(calls.length, 2);
  });

  it("turns a refused login into Forbidden carrying OpenBao's reason, never the JWT", async () => {
    const { http } = loginEndpoint(() => ({
      status: 403,
      body: { errors: ["invalid audience (aud) claim"] },
    }));
    const auth = new KubernetesAuth(http, { mount: "k", role: "r", jwt: async () => "secret-jwt-value" });
    const err = await auth.token().then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof BackendError);
    assert.equal(err.failure, "forbidden");
    assert.match(err.message, /invalid audience/);
    assert.ok(!err.message.includes("secret-jwt-value"));
  });
});
