import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { CENSOR, createLogger, REDACT_DEPTH, redactTree, SECRET_FIELDS } from "../../src/runtime/log.js";

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, stream };
}

describe("log redaction", () => {
  it("censors secret-bearing fields at the top level, deep down, in headers and in a config", () => {
    const { lines, stream } = capture();
    const log = createLogger({ stream, level: "debug" });
    const secrets = ["tok-1", "pw-1", "Bearer abc", "hvs.vault", "dev-tok", "kv-value", "jwt-1"];
    log.info(
      {
        token: "tok-1",
        login: { password: "pw-1", jwt: "jwt-1" },
        headers: { authorization: "Bearer abc", "x-vault-token": "hvs.vault" },
        section: { backend: { auth: { developmentToken: "dev-tok" } } },
        keyNames: ["admin.password"],
        path: "secret/app",
      },
      "request",
    );
    log.child({ controller: "vaultseed" }).debug({ data: { password: "kv-value" } }, "read");
    const out = lines.join("");
    for (const s of secrets) assert.ok(!out.includes(s), `${s} leaked: ${out}`);
    const first = JSON.parse(lines[0]!);
    assert.equal(first.token, CENSOR);
    assert.equal(first.headers.authorization, CENSOR);
    assert.equal(first.section.backend.auth.developmentToken, CENSOR);
    // Names of keys and paths stay readable: they are what an operator needs to act.
    assert.deepEqual(first.keyNames, ["admin.password"]);
    assert.equal(first.path, "secret/app");
    assert.equal(JSON.parse(lines[1]!).data, CENSOR);
  });

  it("censors OpenBao's init answer, seal credentials and cloud keys by name, in any spelling, deep in lists", () => {
    const { lines, stream } = capture();
    const log = createLogger({ stream, level: "debug" });
    const canaries: Record<string, string> = {
      root_token: "canary-root-token",
      keys: "canary-unseal-key",
      keys_base64: "canary-unseal-b64",
      secret_key: "canary-aws-secret",
      access_key: "canary-aws-access",
      token: "canary-transit-token",
      password: "canary-userpass",
      client_secret: "canary-azure",
      pin: "canary-hsm-pin",
    };
    const answer = {
      root_token: canaries["root_token"],
      keys: [canaries["keys"]],
      keys_base64: [canaries["keys_base64"]],
    };
    const config = {
      unseal: {
        awskms: { secretKey: canaries["secret_key"], accessKey: canaries["access_key"], region: "eu-west-1" },
        transit: { token: canaries["token"] },
        azureKeyVault: { clientSecret: canaries["client_secret"] },
        pkcs11: { PIN: canaries["pin"] },
      },
      selfInit: { requests: [{ path: "auth/userpass/users/a", data: { password: canaries["password"] } }] },
    };
    // Six levels down in a list of lists: the old two-level net missed everything below `*.x`.
    log.debug({ pass: { steps: [[{ init: answer }]], spec: config } }, "pass");
    log.child({ request: { "Client-Secret": "canary-child" } }).info("bound");
    const out = lines.join("");
    for (const v of [...Object.values(canaries), "canary-child"])
      assert.ok(!out.includes(v), `${v} leaked: ${out}`);
    const line = JSON.parse(lines[0]!);
    assert.equal(line.pass.steps[0][0].init.root_token, CENSOR);
    assert.equal(line.pass.spec.unseal.awskms.region, "eu-west-1", "other settings stay readable");
    assert.equal(line.pass.spec.unseal.pkcs11.PIN, CENSOR, "case does not matter");
    for (const f of ["root_token", "keys", "keys_base64", "secret_key", "access_key", "client_secret", "pin"])
      assert.ok(SECRET_FIELDS.includes(f), f);
  });

  it("stops at a bounded depth: what lies deeper is replaced whole, a cycle ends", () => {
    let deep: Record<string, unknown> = { token: "canary-deepest" };
    for (let i = 0; i < REDACT_DEPTH + 5; i++) deep = { next: deep };
    const out = JSON.stringify(redactTree(deep));
    assert.ok(!out.includes("canary-deepest"));
    assert.ok(out.includes("[too deep]"));
    const cyclic: Record<string, unknown> = { name: "a" };
    cyclic["self"] = cyclic;
    const copy = redactTree(cyclic) as Record<string, unknown>;
    assert.equal(copy["name"], "a");
    const input = { token: "kept-in-input" };
    redactTree(input);
    assert.equal(input.token, "kept-in-input", "the caller's object is not changed");
  });

  it("keeps errors for pino's serializer and leaves values of harmless fields alone", () => {
    const { lines, stream } = capture();
    const log = createLogger({ stream, level: "debug" });
    log.error({ err: new Error("boom"), reason: "Failed", count: 3, token: null }, "failed");
    const line = JSON.parse(lines[0]!);
    assert.equal(line.err.message, "boom");
    assert.equal(line.reason, "Failed");
    assert.equal(line.count, 3);
    assert.equal(line.token, null, "an absent value is shown as absent");
  });
});
