import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  certHashAnnotation,
  reloadPodPieces,
  reloadWrapperConfigMap,
} from "../../src/targets/openbao/reload/pod.js";
import { RELOAD_SCRIPT } from "../../src/targets/openbao/reload/script.js";

// The wrapper under busybox's sh (the shell of the OpenBao image) with a stand-in server that logs
// the signals it receives: a changed file brings one SIGHUP, an unchanged one none, SIGTERM to the
// wrapper reaches the server, and the wrapper exits with the server's status. Every wait is for
// the server's log line that proves the step, with a generous limit.

const SERVER = `
trap 'echo HUP >> "$LOG"' HUP
trap 'echo TERM >> "$LOG"; exit 7' TERM
echo started >> "$LOG"
while :; do sleep 1 & wait $!; done
`;

async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("openbao TLS reload wrapper (busybox sh)", () => {
  let dir: string;
  let wrapper: ChildProcess;
  let exited: Promise<number | null>;
  const log = () => readFileSync(join(dir, "server.log"), "utf8").trim().split("\n");
  const writeAtomically = (name: string, text: string) => {
    writeFileSync(join(dir, `${name}.tmp`), text);
    renameSync(join(dir, `${name}.tmp`), join(dir, name));
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "ot-wrapper-"));
    writeFileSync(join(dir, "tls-reload.sh"), RELOAD_SCRIPT);
    writeFileSync(join(dir, "server.sh"), SERVER);
    writeFileSync(join(dir, "server.log"), "");
    writeFileSync(join(dir, "tls.crt"), "first certificate\n");
    wrapper = spawn("busybox", ["sh", join(dir, "tls-reload.sh"), "busybox", "sh", join(dir, "server.sh")], {
      env: {
        PATH: process.env["PATH"],
        LOG: join(dir, "server.log"),
        BAO_TLS_RELOAD_FILES: `${join(dir, "tls.crt")} ${join(dir, "tls.key")}`,
        BAO_TLS_RELOAD_INTERVAL: "1",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    exited = new Promise((resolve) => wrapper.on("exit", (code) => resolve(code)));
  });
  after(() => {
    wrapper?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends one SIGHUP per change of a watched file, including one that appears", async () => {
    await until(() => log().includes("started"), "the server to start");
    writeAtomically("tls.crt", "second certificate\n");
    await until(() => log().filter((l) => l === "HUP").length === 1, "a SIGHUP after tls.crt changed");
    writeAtomically("tls.key", "a key that was missing\n");
    await until(() => log().filter((l) => l === "HUP").length === 2, "a SIGHUP after tls.key appeared");
    // A rewrite with the same content is not a change: the next change still brings exactly one more.
    writeAtomically("tls.crt", "second certificate\n");
    writeAtomically("tls.crt", "third certificate\n");
    await until(() => log().filter((l) => l === "HUP").length >= 3, "a SIGHUP after the third certificate");
    assert.equal(log().filter((l) => l === "HUP").length, 3);
  });

  it("passes SIGTERM on and exits with the server's status", async () => {
    wrapper.kill("SIGTERM");
    assert.equal(await exited, 7);
    assert.ok(log().includes("TERM"));
  });
});

describe("openbao TLS reload wrapper: a server that ends at once on SIGTERM", () => {
  // The shell may reap such a server while the wrapper's interrupted wait returns, so the wrapper
  // cannot tell from kill -0 whether its status is still to come; it came out as 143 in about one
  // run of four before the wrapper waited again. Many short runs make that race show.
  it("exits with the server's status every time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ot-wrapper-race-"));
    try {
      writeFileSync(join(dir, "tls-reload.sh"), RELOAD_SCRIPT);
      writeFileSync(
        join(dir, "server.sh"),
        `trap 'exit 7' TERM\necho started > "$LOG"\nwhile :; do sleep 1 & wait $!; done\n`,
      );
      const codes: Array<number | null> = [];
      for (let i = 0; i < 25; i++) {
        const log = join(dir, `server-${i}.log`);
        writeFileSync(log, "");
        const w = spawn(
          "busybox",
          ["sh", join(dir, "tls-reload.sh"), "busybox", "sh", join(dir, "server.sh")],
          {
            env: { PATH: process.env["PATH"], LOG: log },
            stdio: "ignore",
          },
        );
        const exited = new Promise<number | null>((resolve) => w.on("exit", (code) => resolve(code)));
        await until(() => readFileSync(log, "utf8").includes("started"), `server ${i} to start`);
        w.kill("SIGTERM");
        codes.push(await exited);
      }
      assert.deepEqual(
        codes.filter((c) => c !== 7),
        [],
        `exit codes: ${codes.join(" ")}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("openbao TLS reload: pod pieces", () => {
  const ref = { name: "bao", namespace: "vault" };

  it("runs bao under the wrapper and mounts the wrapper and the TLS Secret", () => {
    const p = reloadPodPieces(ref, {
      serverArgs: ["server", "-config=/c.hcl"],
      tlsSecretName: "bao-tls-server",
    });
    assert.deepEqual(p.command, ["/bin/sh", "/openbao/reload/tls-reload.sh"]);
    assert.deepEqual(p.args, ["bao", "server", "-config=/c.hcl"]);
    assert.deepEqual(p.env, [
      {
        name: "BAO_TLS_RELOAD_FILES",
        value: "/openbao/tls/tls.crt /openbao/tls/tls.key /openbao/tls/ca.crt",
      },
      { name: "BAO_TLS_RELOAD_INTERVAL", value: "5" },
    ]);
    assert.deepEqual(p.volumes, [
      { name: "tls-reload", configMap: { name: "bao-tls-reload", defaultMode: 0o555 } },
      { name: "tls", secret: { secretName: "bao-tls-server", defaultMode: 0o440 } },
    ]);
    const cm = reloadWrapperConfigMap(ref) as unknown as { data: Record<string, string> };
    assert.equal(cm.data["tls-reload.sh"], RELOAD_SCRIPT);
  });

  it("without a TLS Secret (ACME, TLS off) the wrapper watches nothing", () => {
    const p = reloadPodPieces(ref, { serverArgs: ["server"] });
    assert.equal(p.env[0]!.value, "");
    assert.equal(p.volumes.length, 1);
  });
});

describe("openbao TLS reload: the active certificate's annotation", () => {
  it("is openbao.org/tls-cert-hash when a hash is known, nothing otherwise", () => {
    assert.deepEqual(certHashAnnotation("ab12"), { "openbao.org/tls-cert-hash": "ab12" });
    assert.deepEqual(certHashAnnotation(undefined), {});
  });
});
