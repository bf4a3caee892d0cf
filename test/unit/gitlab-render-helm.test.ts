import assert from "node:assert/strict";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { HelmError, HelmRunner } from "../../src/targets/gitlab/render/index.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";

// The process plumbing of HelmRunner, driven by small scripts standing in for helm's process
// behaviour (hanging, flooding, failing); helm itself is exercised in the integration tests.

describe("HelmRunner process handling", () => {
  let dir: string;
  const script = async (name: string, body: string) => {
    const path = join(dir, name);
    await writeFile(path, `#!/bin/sh\n${body}\n`);
    await chmod(path, 0o755);
    return path;
  };
  before(() => {
    dir = makeTempDir("helm-runner");
  });
  after(() => removeTempDir(dir));

  it("passes stdin, returns stdout, and gives helm an environment without the caller's", async () => {
    process.env["KUBECONFIG"] = "/should/not/leak";
    const echo = await script("echo", 'cat; echo "KUBECONFIG=$KUBECONFIG HOME=$HOME"');
    const out = await new HelmRunner({ binary: echo }).run(["template"], { stdin: "values-in\n" });
    delete process.env["KUBECONFIG"];
    assert.equal(out.stdout, "values-in\nKUBECONFIG= HOME=/nonexistent/platform-operator-helm\n");
  });

  it("fails with helm's stderr as detail and the exit code", async () => {
    const fail = await script("fail", 'echo "Error: nope" >&2; exit 3');
    await assert.rejects(new HelmRunner({ binary: fail }).run(["template"]), (e: unknown) => {
      assert.ok(e instanceof HelmError);
      assert.equal(e.exitCode, 3);
      assert.equal(e.detail, "Error: nope\n");
      assert.equal(e.message, "helm template failed (exit 3)");
      return true;
    });
  });

  it("kills a run that exceeds the timeout", async () => {
    const hang = await script("hang", "exec sleep 600");
    await assert.rejects(
      new HelmRunner({ binary: hang, timeoutMs: 300 }).run(["template"]),
      /helm template timed out after 0 s/,
    );
  });

  it("kills a run that prints more than the output bound", async () => {
    const flood = await script("flood", "exec yes helm");
    await assert.rejects(
      new HelmRunner({ binary: flood, maxOutputBytes: 1 << 20 }).run(["template"]),
      /printed more than 1048576 bytes/,
    );
  });

  it("is cancelled by the caller's signal, before or during the run", async () => {
    const hang = await script("hang2", "exec sleep 600");
    const runner = new HelmRunner({ binary: hang });
    await assert.rejects(runner.run(["template"], { signal: AbortSignal.abort() }), /was cancelled/);
    const ac = new AbortController();
    const pending = runner.run(["template"], { signal: ac.signal });
    ac.abort();
    await assert.rejects(pending, /helm template was cancelled/);
  });

  it("names HELM_BINARY when the binary cannot run", async () => {
    await assert.rejects(
      new HelmRunner({ binary: join(dir, "missing-helm") }).run(["version"]),
      /set HELM_BINARY/,
    );
  });

  it("runs at most maxConcurrent at once, the rest wait their turn", async () => {
    const log = join(dir, "log");
    await writeFile(log, "");
    // A run that overlapped another would leave a foreign line between its start and its end.
    const body = `echo "start $1" >> ${log}; sleep 0.3; echo "end $1" >> ${log}`;
    const slow = await script("slow", body);
    const runner = new HelmRunner({ binary: slow, maxConcurrent: 1 });
    await Promise.all(["a", "b", "c"].map((id) => runner.run([id])));
    const lines = (await readFile(log, "utf8")).trim().split("\n");
    for (let i = 0; i < lines.length; i += 2) {
      assert.equal(
        lines[i]!.replace("start", "end"),
        lines[i + 1],
        `runs did not overlap: ${lines.join(", ")}`,
      );
    }
    assert.equal(lines.length, 6);
    assert.deepEqual(runner.counts.get("a"), 1);
  });
});
