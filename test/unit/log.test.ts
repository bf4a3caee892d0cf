import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { createLogger } from "../../src/runtime/log.js";

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
  it("censors secret-bearing fields at the top level, one level down, in headers and in a config", () => {
    const { lines, stream } = capture();
    const log = createLogger({ stream, level: "debug" });
    const secrets = ["tok-1", "pw-1", "Bearer abc", "hvs.vault", "dev-tok", "kv-value", "jwt-1"];
    log.info(
      {
        token: "tok-1",
        login: { password: "pw-1", jwt: "jwt-1" },
        headers: { authorization: "Bearer abc", "x-vault-token": "hvs.vault" },
        section: { backend: { auth: { developmentToken: "dev-tok" } } },
        keys: ["admin.password"],
        path: "secret/app",
      },
      "request",
    );
    log.child({ controller: "vaultseed" }).debug({ data: { password: "kv-value" } }, "read");
    const out = lines.join("");
    for (const s of secrets) assert.ok(!out.includes(s), `${s} leaked: ${out}`);
    const first = JSON.parse(lines[0]!);
    assert.equal(first.token, "[redacted]");
    assert.equal(first.headers.authorization, "[redacted]");
    assert.equal(first.section.backend.auth.developmentToken, "[redacted]");
    // Names of keys and paths stay readable: they are what an operator needs to act.
    assert.deepEqual(first.keys, ["admin.password"]);
    assert.equal(first.path, "secret/app");
    assert.equal(JSON.parse(lines[1]!).data, "[redacted]");
  });
});
