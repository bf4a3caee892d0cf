import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { GoBuildProgress } from "../../src/testenv/gobuild.js";
import { progressOn } from "../../src/testenv/progress.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

function sink(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 80, write: (c: string) => writes.push(c) > 0 } };
}

describe("build progress", () => {
  it("on a terminal: one line rewritten in place, lasting lines above it", () => {
    const { writes, stream } = sink(true);
    const p = progressOn(stream as unknown as NodeJS.WritableStream, { prefix: "[t] " });
    p.status("compiling, 1 packages");
    p.status("compiling, 2 packages");
    p.line("downloaded bao");
    p.status("compiling, 3 packages");
    p.done();
    const out = writes.join("");
    assert.equal(
      out,
      "\r\x1b[K[t] compiling, 1 packages\r\x1b[K[t] compiling, 2 packages" +
        "\r\x1b[K[t] downloaded bao\n\r\x1b[K[t] compiling, 3 packages\n",
    );
    // Only two line ends: the lasting line and the end of the status.
    assert.equal(out.split("\n").length - 1, 2);
  });

  it("on a terminal: a status longer than the terminal is cut so \\r can still rewrite it", () => {
    const { writes, stream } = sink(true);
    progressOn(stream as unknown as NodeJS.WritableStream).status("x".repeat(500));
    assert.equal(writes.join("").replace("\r\x1b[K", "").length, 79);
  });

  it("in CI (not a terminal): plain lines, a status at most every interval unless the step changes", () => {
    const { writes, stream } = sink(false);
    let now = 0;
    const p = progressOn(stream as unknown as NodeJS.WritableStream, {
      plainEveryMs: 15_000,
      now: () => now,
    });
    p.status("go: downloading modules, 0 fetched");
    now = 5_000;
    p.status("go: downloading modules, 9 fetched");
    now = 6_000;
    p.status("go build: compiling, 1 packages");
    now = 10_000;
    p.status("go build: compiling, 50 packages");
    now = 21_000;
    p.status("go build: compiling, 90 packages");
    p.line("built");
    assert.deepEqual(writes, [
      "go: downloading modules, 0 fetched\n",
      "go build: compiling, 1 packages\n",
      "go build: compiling, 90 packages\n",
      "built\n",
    ]);
    assert.ok(!writes.join("").includes("\r"));
  });

  it("reads go's output: module fetches, compiled packages, then the link of each command", () => {
    const state = new GoBuildProgress(new Map([["platform-operator/testenv/cmd/etcd", "etcd"]]));
    assert.match(state.describe(2_000), /^go: downloading modules, 0 fetched, 2\.0s elapsed$/);
    // The lines `go list -x` writes around one fetch; only a finished .zip counts.
    state.feedDownload("# get https://proxy.golang.org/k8s.io/api/@v/v0.37.2.zip");
    state.feedDownload("# get https://proxy.golang.org/k8s.io/api/@v/v0.37.2.mod: 200 OK (0.020s)");
    state.feedDownload("# get https://proxy.golang.org/k8s.io/api/@v/v0.37.2.zip: 200 OK (0.412s)");
    assert.equal(state.fetched, 1);
    state.total = 3;
    state.phase = "compiling";
    assert.match(state.describe(3_000), /^go build: all packages cached so far, linking, 3\.0s elapsed$/);
    state.feedBuild("k8s.io/api/core/v1");
    state.feedBuild("./foo.go:3:2: undefined: x"); // a diagnostic, not a package
    assert.match(state.describe(65_000), /^go build: compiling, 1 of up to 3 packages, 1m05s elapsed$/);
    state.feedBuild("platform-operator/testenv/cmd/etcd");
    assert.match(state.describe(70_000), /compiling, 2 of up to 3 packages, linking etcd, 1m10s/);
  });

  it("spots the link step in the output of a real go build", () => {
    const dir = makeTempDir("gobuild-progress");
    mkdirSync(join(dir, "cmd", "etcd"), { recursive: true });
    writeFileSync(join(dir, "go.mod"), "module example.test/m\n\ngo 1.22\n");
    // A fresh body each run: a main package found in Go's build cache is not compiled, so not printed.
    const body = `package main\n\nfunc main() { println("${randomUUID()}") }\n`;
    writeFileSync(join(dir, "cmd", "etcd", "main.go"), body);
    const r = spawnSync("go", ["build", "-v", "-trimpath", "-o", `${join(dir, "bin")}/`, "./cmd/..."], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "" },
    });
    assert.equal(r.status, 0, r.stderr);
    const state = new GoBuildProgress(new Map([["example.test/m/cmd/etcd", "etcd"]]));
    for (const line of `${r.stdout}\n${r.stderr}`.split("\n")) state.feedBuild(line);
    assert.deepEqual(state.linking, ["etcd"]);
    assert.ok(state.compiled >= 1);
  });
});
