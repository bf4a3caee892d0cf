import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const src = fileURLToPath(new URL("../../../src", import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The layer of a file under src: runtime, apis, cli, testenv, or targets/<name>. */
function layerOf(file: string): string {
  const [top, sub] = relative(src, file).split("/");
  return top === "targets" ? `targets/${sub}` : top!;
}

const IMPORT = /(?:import|export)[^;'"]*?from\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;

/** Which layers each layer may import (besides itself). Arrows point down only. */
const allowed: Record<string, (to: string) => boolean> = {
  runtime: () => false,
  apis: () => false,
  testenv: () => false,
  cli: () => true,
};

describe("layers (DESIGN.md)", () => {
  const edges: { from: string; to: string; file: string }[] = [];
  for (const file of files(src)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(IMPORT)) {
      const target = resolve(dirname(file), (m[1] ?? m[2])!.replace(/\.js$/, ".ts"));
      edges.push({ from: layerOf(file), to: layerOf(target), file: relative(src, file) });
    }
  }

  it("finds the imports it checks", () => {
    assert.ok(edges.length > 100);
    assert.ok(edges.some((e) => e.from === "targets/vault" && e.to === "runtime"));
  });

  it("keeps the runtime, the APIs and the test environment free of targets and the CLI", () => {
    for (const e of edges) {
      if (e.from === e.to || !(e.from in allowed)) continue;
      assert.ok(allowed[e.from]!(e.to), `${e.file} (${e.from}) imports ${e.to}`);
    }
  });

  it("lets a target import only itself, the runtime and the APIs: targets never import each other", () => {
    for (const e of edges.filter((x) => x.from.startsWith("targets/"))) {
      assert.ok(
        e.to === e.from || e.to === "runtime" || e.to === "apis",
        `${e.file} (${e.from}) imports ${e.to}`,
      );
    }
  });
});
