import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

const src = fileURLToPath(new URL("../../../src", import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/**
 * Raw status writes in one file's text: an apply of the status subresource, a patch or update naming
 * the "status" subresource, or a request path ending in /status (RBAC's "kinds/status" resource
 * names are no write). Outside src/runtime status is written only through
 * the runtime's writers (StatusWriter, casStatus and its kin in runtime/status.ts).
 */
const RAW_STATUS_WRITE =
  /\bapplyStatus\s*[<(]|["'`]status["'`]\s*,?\s*\)|["'`](?:\/[^"'`\n]*|\$\{[^}]*\})?\/status["'`]/g;

function rawStatusWrites(root: string): string[] {
  return files(root).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(RAW_STATUS_WRITE)].map(
      (m) => `${relative(root, file)}: ${m[0].replace(/\s+/g, " ")}`,
    ),
  );
}

/** The layer of a file under src: runtime, apis, cli, testenv, or targets/<name>. */
function layerOf(file: string): string {
  const [top, sub] = relative(src, file).split("/");
  return top === "targets" ? `targets/${sub}` : top!;
}

// Every relative import: value or type-only, re-exports, side-effect imports and dynamic import().
const IMPORT =
  /(?:import|export)[^;'"]*?from\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)|import\s*["'](\.[^"']+)["']/g;

/** Each .ts file under `root` (path relative to it) with the files under `root` it imports. */
function importGraph(root: string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of files(root)) {
    const imports = new Set<string>();
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const target = resolve(dirname(file), (m[1] ?? m[2] ?? m[3])!.replace(/\.js$/, ".ts"));
      imports.add(relative(root, target));
    }
    graph.set(relative(root, file), imports);
  }
  return graph;
}

/** One circle per import that closes one (a → … → a), found by a depth-first walk. */
function circles(graph: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) found.push(fromSmallest(path.slice(at)));
      else if (!done.has(next) && graph.has(next)) visit(next);
    }
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return found;
}

/** A circle written from its smallest file and back to it, so that one circle reads one way. */
function fromSmallest(circle: string[]): string[] {
  const start = circle.indexOf([...circle].sort()[0]!);
  const turned = [...circle.slice(start), ...circle.slice(0, start)];
  return [...turned, turned[0]!];
}

/** Which layers each layer may import (besides itself). Arrows point down only. */
const allowed: Record<string, (to: string) => boolean> = {
  runtime: () => false,
  apis: () => false,
  testenv: () => false,
  cli: () => true,
};

/**
 * The rooms of the openbao target, top first. A file may import its own room and any room below
 * it, never one above: what a room uses lies further down, so each can be read (and tested) with
 * only what is below it in mind. A folder holds its subfolders unless they have a room of their own;
 * a file at the target's root not named here is in the bottom room.
 */
const OPENBAO_ROOMS: { holds: string[]; why: string }[] = [
  {
    holds: ["target.ts", "reconciler.ts", "services-default.ts", "admission.ts"],
    why: "the wiring builds the controllers and the admission checks",
  },
  { holds: ["tenant/"], why: "the tenant provisioner onboards namespaces for clusters and restores" },
  { holds: ["drill/"], why: "restore tests drive a throwaway cluster through an OpenBaoRestore" },
  { holds: ["restore/"], why: "a restore runs the backup's executor Job with its defaults" },
  { holds: ["adminops/"], why: "backups and upgrades drive the workload and its pods' OpenBao" },
  { holds: ["steps/"], why: "the workload pass in order, each step calling the workload's services" },
  {
    holds: ["readiness/"],
    why: "upstream's readiness conditions, decided from what the workload's objects and caches show",
  },
  { holds: ["workload/"], why: "the workload's services: StatefulSets, certificates, network, init" },
  { holds: ["imageverify/"], why: "image signatures checked before a pod or Job runs the image" },
  { holds: ["validate/"], why: "spec checks; the workload reuses their value checks" },
  { holds: ["workload/config/"], why: "the spec read as OpenBao config (seal, spec views), validation too" },
  { holds: ["reload/"], why: "the certificate reload wrapper in the pods" },
  { holds: ["status.ts", "status-apply.ts"], why: "the workload's status and how it is written" },
  { holds: ["opslifecycle/"], why: "the status planes and the operation lock" },
  { holds: ["executor/"], why: "the executor Job's contract and run, which opens object stores" },
  { holds: ["objectstore/"], why: "object stores and the credential files they read" },
  { holds: ["baoclient/"], why: "the OpenBao API of one pod" },
  { holds: [""], why: "names, identity, config, drift, metrics: what every room uses" },
];

/** The room of a path under src/targets/openbao: the longest folder prefix or file name that matches. */
function roomOf(path: string): number {
  let room = -1;
  let longest = -1;
  OPENBAO_ROOMS.forEach(({ holds }, i) => {
    for (const h of holds) {
      const match = h === "" || h.endsWith("/") ? path.startsWith(h) : path === h;
      if (match && h.length > longest) [room, longest] = [i, h.length];
    }
  });
  return room;
}

/** The openbao imports that point up the rooms, as "from -> to". */
function arrowsUp(graph: Map<string, Set<string>>): string[] {
  const inOpenbao = (p: string) => p.startsWith("targets/openbao/");
  const local = (p: string) => p.slice("targets/openbao/".length);
  const up: string[] = [];
  for (const [from, imports] of graph) {
    if (!inOpenbao(from)) continue;
    for (const to of imports)
      if (inOpenbao(to) && roomOf(local(to)) < roomOf(local(from))) up.push(`${from} -> ${to}`);
  }
  return up;
}

/** A small tree of files under a fresh folder, for checking that the checks above can fail. */
function tree(contents: Record<string, string>): string {
  const root = makeTempDir("layers");
  for (const [path, text] of Object.entries(contents)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("layers (DESIGN.md)", () => {
  const graph = importGraph(src);
  const edges: { from: string; to: string; file: string }[] = [];
  for (const [file, imports] of graph)
    for (const target of imports)
      edges.push({ from: layerOf(join(src, file)), to: layerOf(join(src, target)), file });

  it("finds the imports it checks", () => {
    assert.ok(edges.length > 100);
    assert.ok(edges.some((e) => e.from === "targets/vault" && e.to === "runtime"));
    assert.ok(graph.get("runtime/restmapper.ts")?.has("runtime/api-request.ts"), "type-only imports count");
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

  it("has no import circle anywhere under src, type-only imports included", () => {
    assert.deepEqual(
      circles(graph).map((c) => c.join(" -> ")),
      [],
    );
  });

  it("inside openbao, every import points down the rooms, none back up", () => {
    assert.deepEqual(arrowsUp(graph), []);
  });

  it("names openbao rooms that exist, and every openbao file has one", () => {
    const openbao = [...graph.keys()]
      .filter((f) => f.startsWith("targets/openbao/"))
      .map((f) => f.slice("targets/openbao/".length));
    for (const { holds } of OPENBAO_ROOMS)
      for (const h of holds)
        assert.ok(
          openbao.some((f) => (h.endsWith("/") ? f.startsWith(h) : f === h || h === "")),
          `the room "${h}" holds no file`,
        );
    for (const f of openbao) assert.ok(roomOf(f) >= 0, `${f} has no room`);
  });

  it("writes status only through the runtime: no raw status patch or apply under src/targets", () => {
    assert.deepEqual(rawStatusWrites(join(src, "targets")), []);
  });

  it("the raw status check can fail: an applyStatus, a status subresource patch and a /status path", () => {
    const root = tree({
      "targets/a/lock.ts": "await client.applyStatus(TYPE, body, opts);\n",
      "targets/a/patch.ts": 'await client.mergePatch(TYPE, name, ns, body, "status");\n',
      "targets/a/path.ts": 'const p = "/apis/g/v1/things/" + name + "/status";\n',
      "targets/a/fine.ts":
        'const status = "status is fine as a word";\nconst rule = "openbaoclusters/status";\nawait writer.write(obj, next);\n',
    });
    assert.deepEqual(rawStatusWrites(join(root, "targets")).sort(), [
      "a/lock.ts: applyStatus(",
      'a/patch.ts: "status")',
      'a/path.ts: "/status"',
    ]);
  });

  it("the checks can fail: a type-only circle and an arrow back up are found", () => {
    const root = tree({
      "runtime/client.ts": 'import { RestMapper } from "./restmapper.js";\nexport class KubeClient {}\n',
      "runtime/restmapper.ts":
        'import type {\n  KubeClient,\n} from "./client.js";\nexport class RestMapper {}\n',
      "runtime/lazy.ts": 'export const load = () => import("./lazy-part.js");\n',
      "runtime/lazy-part.ts": 'import "./lazy.js";\n',
      "targets/openbao/executor/contract.ts":
        'import { credentialsFrom } from "../objectstore/credentials.js";\n',
      "targets/openbao/objectstore/credentials.ts":
        'import { CredentialFiles } from "../executor/contract.js";\n',
    });
    const g = importGraph(root);
    assert.deepEqual(
      circles(g)
        .map((c) => c.join(" -> "))
        .sort(),
      [
        "runtime/client.ts -> runtime/restmapper.ts -> runtime/client.ts",
        "runtime/lazy-part.ts -> runtime/lazy.ts -> runtime/lazy-part.ts",
        "targets/openbao/executor/contract.ts -> targets/openbao/objectstore/credentials.ts -> targets/openbao/executor/contract.ts",
      ],
    );
    assert.deepEqual(arrowsUp(g), [
      "targets/openbao/objectstore/credentials.ts -> targets/openbao/executor/contract.ts",
    ]);
  });
});
