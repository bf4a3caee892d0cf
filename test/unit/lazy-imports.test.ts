import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { allKinds, crdFor, SCHEMA_HASH_ANNOTATION } from "../../src/apis/index.js";
import { implementedTargetNames, kindsOf, optionalKindOf, reservedTargetOf } from "../../src/cli/targets.js";
import { expectedRevision } from "../../src/targets/vault/crd-revision.js";

const run = promisify(execFile);
const dist = (p: string) => fileURLToPath(new URL(`../../src/${p}`, import.meta.url));

/**
 * Runs `code` in a fresh node where importing any of `blocked` throws: the proof that a path never
 * loads those packages (a module that imported one would fail to load).
 */
async function withBlocked(blocked: string[], code: string): Promise<string> {
  const hook = `const blocked = ${JSON.stringify(blocked)};
export async function resolve(specifier, context, next) {
  if (blocked.some((b) => specifier === b || specifier.startsWith(b + "/"))) throw new Error("blocked import of " + specifier);
  return next(specifier, context);
}`;
  const script = `import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(${JSON.stringify(hook)}));
${code}`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { timeout: 60_000 });
  return stdout.trim();
}

/** A resolve hook refusing any module under another target's folder than `own`. */
function otherTargets(own: string): string {
  return `export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  const m = /\\/dist\\/src\\/targets\\/([a-z]+)\\//.exec(r.url);
  if (m && m[1] !== ${JSON.stringify(own)}) throw new Error("blocked import of " + r.url);
  return r;
}`;
}

describe("what the run path does not load", () => {
  it("the operator's run path and the vault target load neither @kubernetes/client-node nor TypeBox", async () => {
    const out = await withBlocked(
      ["@kubernetes/client-node", "@sinclair/typebox", "age-encryption"],
      `await import(${JSON.stringify(dist("cli/run.js"))});
const { vaultTarget } = await import(${JSON.stringify(dist("targets/vault/target.js"))});
const { expectedRevision } = await import(${JSON.stringify(dist("targets/vault/crd-revision.js"))});
process.stdout.write(String(typeof vaultTarget) + " " + (await expectedRevision()));`,
    );
    assert.match(out, /^function \S+$/);
  });

  it("the gitlab target loads no TypeBox: the reconciler takes its names from gitlabcore-names", async () => {
    const out = await withBlocked(
      ["@kubernetes/client-node", "@sinclair/typebox"],
      `const { gitlabTarget } = await import(${JSON.stringify(dist("targets/gitlab/target.js"))});
process.stdout.write(gitlabTarget().name);`,
    );
    assert.equal(out, "gitlab");
  });

  it("the openbao target loads no TypeBox and no other target: it takes its names from the *-names modules", async () => {
    const out = await withBlocked(
      ["@kubernetes/client-node", "@sinclair/typebox", "age-encryption"],
      `register("data:text/javascript," + encodeURIComponent(${JSON.stringify(otherTargets("openbao"))}));
const { openbaoTarget } = await import(${JSON.stringify(dist("targets/openbao/target.js"))});
process.stdout.write(openbaoTarget().name);`,
    );
    assert.equal(out, "openbao");
  });

  it("the vault target loads no other target's modules", async () => {
    const out = await withBlocked(
      ["@kubernetes/client-node"],
      `register("data:text/javascript," + encodeURIComponent(${JSON.stringify(otherTargets("vault"))}));
await import(${JSON.stringify(dist("cli/run.js"))});
const { vaultTarget } = await import(${JSON.stringify(dist("targets/vault/target.js"))});
process.stdout.write(vaultTarget().name);`,
    );
    assert.equal(out, "vault");
  });

  it("the run path and the targets do not load node's bundled undici (fetch, WebSocket)", async () => {
    // On Node 24 an ESM import of node:http loads it through the http.WebSocket getter (~12 MiB).
    const out = await withBlocked(
      [],
      `await import(${JSON.stringify(dist("cli/run.js"))});
for (const t of ["vault/target.js", "openbao/target.js", "gitlab/target.js"]) await import(${JSON.stringify(dist("targets/"))} + "/" + t);
process.stdout.write(process.moduleLoadList.filter((m) => m.includes("undici")).join(",") || "none");`,
    );
    assert.equal(out, "none");
  });

  it("the blocking itself works (the check above can fail)", async () => {
    await assert.rejects(
      withBlocked(["@sinclair/typebox"], `await import(${JSON.stringify(dist("apis/index.js"))});`),
      /blocked import of @sinclair\/typebox/,
    );
  });

  it("the expected CRD revision read from deploy/crds is the one the schema builds", async () => {
    const built = crdFor("VaultSeed").metadata.annotations?.[SCHEMA_HASH_ANNOTATION];
    assert.ok(built);
    assert.equal(await expectedRevision(), built);
  });

  it("the targets table names every kind of the schemas, once, without loading them", () => {
    const named = [...kindsOf(implementedTargetNames())];
    for (const k of allKinds)
      if (!named.includes(k.kind))
        assert.ok(reservedTargetOf(k.kind) ?? optionalKindOf(k.kind), `${k.kind} has no target`);
    assert.equal(reservedTargetOf("OpenBaoTenant"), undefined, "provisioned, not reserved");
    assert.equal(optionalKindOf("OpenBaoTenant")?.target, "openbao");
    for (const kind of named)
      assert.ok(
        allKinds.some((k) => k.kind === kind),
        `${kind} is not a schema's kind`,
      );
  });
});
