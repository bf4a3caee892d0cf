import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Informer } from "../../src/runtime/informer.js";
import { ConfigError } from "../../src/runtime/target.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { PathClaims } from "../../src/targets/vault/claims.js";
import { parseVaultConfig } from "../../src/targets/vault/config.js";
import { RefGraph } from "../../src/targets/vault/ref-graph.js";
import {
  type ApplicationScopes,
  admits,
  parsePrefix,
  readRefusal,
  writeRefusal,
} from "../../src/targets/vault/scope.js";
import type { CompiledSeed } from "../../src/targets/vault/validate.js";

const backend = { address: "https://bao:8200", auth: { developmentToken: "t" } };

function scopes(applications: Record<string, unknown>): ApplicationScopes {
  return parseVaultConfig({ backend, applications }, "targets.vault").applications;
}

const SCOPES = scopes({
  "team-a": { write: ["apps/team-a/"], read: ["shared/catalog/"] },
  "team-b": { write: ["apps/team-b"] },
});

/** Everything a server or a person might do to a path text before comparing it: the escapes to beat. */
function normalizations(path: string): string[] {
  const out = new Set<string>([path]);
  let decoded = path;
  for (let i = 0; i < 3; i++) {
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      break;
    }
    out.add(decoded);
  }
  for (const p of [...out]) {
    out.add(p.normalize("NFKC"));
    out.add(p.normalize("NFC"));
    // What path.Clean-like handling makes of dot segments and doubled slashes.
    const stack: string[] = [];
    for (const s of p.split("/")) {
      if (s === "" || s === ".") continue;
      if (s === "..") stack.pop();
      else stack.push(s);
    }
    out.add(stack.join("/"));
    out.add(p.toLowerCase());
  }
  return [...out];
}

// Segments chosen to try every way out: dot segments, empty ones, percent-encoded slashes and dots,
// Unicode look-alikes (Cyrillic а, fullwidth letters and solidus, zero-width space, combining marks).
const hostileSegment = fc.constantFrom(
  "apps",
  "team-a",
  "team-b",
  "team-ab",
  "shared",
  "catalog",
  "x",
  "..",
  ".",
  "",
  "%2e%2e",
  "%2E%2E",
  "%2f",
  "team-a%2f..%2fteam-b",
  "%252e%252e",
  "te\u0430m-a",
  "\uff41pps",
  "team-a\u200b",
  "team\uff0fb",
  "te\u0301am-a",
  "TEAM-A",
  "a b",
  "a#b",
  "a\\..",
);
const hostilePath = fc.array(hostileSegment, { minLength: 1, maxLength: 6 }).map((s) => s.join("/"));

describe("application namespaces: the allow-list", () => {
  it("lets an application seed under its prefix only, segment by segment", () => {
    assert.equal(writeRefusal(SCOPES, "team-a", "apps/team-a/db"), undefined);
    assert.equal(writeRefusal(SCOPES, "team-b", "apps/team-b/x/y"), undefined);
    const platform = writeRefusal(SCOPES, "team-a", "secret/platforms/prod/core/keycloak");
    assert.match(
      platform!,
      /may seed only under apps\/team-a\/: spec\.path secret\/platforms\/prod\/core\/keycloak lies outside/,
    );
    assert.match(writeRefusal(SCOPES, "team-a", "apps/team-b/db")!, /only under apps\/team-a\//);
    // team-b's prefix has no trailing slash and still covers only its own segment.
    assert.match(writeRefusal(SCOPES, "team-b", "apps/team-bb/x")!, /outside/);
    // The prefix itself is not a path under it.
    assert.match(writeRefusal(SCOPES, "team-a", "apps/team-a")!, /outside/);
    // Platform namespaces are not listed and keep the whole reach.
    assert.equal(writeRefusal(SCOPES, "vault-operator-system", "apps/team-a/db"), undefined);
    assert.equal(writeRefusal(SCOPES, "vault-operator-system", "secret/anything"), undefined);
  });

  it("lets references read the write prefixes and the read prefixes, nothing else", () => {
    assert.equal(readRefusal(SCOPES, "team-a", "k", "apps/team-a/other"), undefined);
    assert.equal(readRefusal(SCOPES, "team-a", "k", "shared/catalog/smtp"), undefined);
    assert.match(
      readRefusal(SCOPES, "team-a", "db.password", "secret/platforms/prod/core/keycloak")!,
      /^db\.password: .*may read only under apps\/team-a\/, shared\/catalog\//,
    );
    assert.match(readRefusal(SCOPES, "team-b", "k", "shared/catalog/smtp")!, /only under apps\/team-b\//);
    assert.equal(readRefusal(SCOPES, "platform", "k", "anything/at/all"), undefined);
    assert.equal(admits(SCOPES, "team-a", "apps/team-a/x", ["shared/catalog/y"]), true);
    assert.equal(admits(SCOPES, "team-a", "apps/team-a/x", ["secret/y"]), false);
  });

  it("names adversarial segments in the refusal, escaped", () => {
    assert.match(writeRefusal(SCOPES, "team-a", "apps/team-a/../team-b/x")!, /\. or \.\. segments/);
    assert.match(writeRefusal(SCOPES, "team-a", "apps/team-a//x")!, /empty segment/);
    assert.match(writeRefusal(SCOPES, "team-a", "apps/team-a/x/")!, /empty segment/);
    assert.match(
      writeRefusal(SCOPES, "team-a", "apps/team-a/%2e%2e/x")!,
      /segment "%2e%2e" may hold only ASCII/,
    );
    assert.match(writeRefusal(SCOPES, "team-a", "apps/te\u0430m-a/x")!, /te\\u\{430\}m-a/);
  });

  it("no admitted path, however it is decoded or normalized, leaves its prefix", () => {
    fc.assert(
      fc.property(hostilePath, (path) => {
        if (writeRefusal(SCOPES, "team-a", path) !== undefined) return;
        // Admitted: every reading of the text is the text itself, under apps/team-a/.
        for (const n of normalizations(path)) {
          if (n === path.toLowerCase()) continue; // a different path only if the backend folded case, which KV does not
          assert.equal(n, path, `${JSON.stringify(path)} reads as ${JSON.stringify(n)}`);
        }
        assert.ok(path.startsWith("apps/team-a/"), path);
        assert.equal(writeRefusal(SCOPES, "team-b", path) === undefined, false);
      }),
      { numRuns: 5000 },
    );
  });

  it("no admitted reference source leaves the read prefixes", () => {
    fc.assert(
      fc.property(hostilePath, (path) => {
        if (readRefusal(SCOPES, "team-a", "k", path) !== undefined) return;
        for (const n of normalizations(path)) if (n !== path.toLowerCase()) assert.equal(n, path);
        assert.ok(path.startsWith("apps/team-a/") || path.startsWith("shared/catalog/"), path);
      }),
      { numRuns: 5000 },
    );
  });

  it("any plain path extending a prefix is admitted (the check refuses no honest path)", () => {
    const plain = fc
      .stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,11}$/)
      .filter((s) => s !== "." && s !== "..");
    fc.assert(
      fc.property(fc.array(plain, { minLength: 1, maxLength: 4 }), (rest) => {
        assert.equal(writeRefusal(SCOPES, "team-a", `apps/team-a/${rest.join("/")}`), undefined);
      }),
    );
  });
});

describe("application namespaces: configuration", () => {
  it("reads prefixes with or without the trailing slash", () => {
    assert.deepEqual(parsePrefix("apps/team-a/"), { segments: ["apps", "team-a"] });
    assert.deepEqual(parsePrefix("apps/team-a"), { segments: ["apps", "team-a"] });
  });

  it("refuses bad configuration naming the field", () => {
    const refused = (applications: unknown, field: string, problem: RegExp) =>
      assert.throws(
        () => parseVaultConfig({ backend, applications }, "targets.vault"),
        (e: unknown) => e instanceof ConfigError && e.field === field && problem.test(e.message),
      );
    refused({ "team-a": { write: ["apps/../x/"] } }, "targets.vault.applications.team-a.write[0]", /\.\./);
    refused(
      { "team-a": { write: ["apps//x"] } },
      "targets.vault.applications.team-a.write[0]",
      /empty segment/,
    );
    refused({ "team-a": { write: ["/"] } }, "targets.vault.applications.team-a.write[0]", /empty/);
    refused({ "team-a": { write: [] } }, "targets.vault.applications.team-a.write", /at least one prefix/);
    refused({ "team-a": { write: "apps/a/" } }, "targets.vault.applications.team-a.write", /list/);
    refused({ "team-a": { write: ["apps/a/"], wirte: [] } }, "targets.vault.applications.team-a.wirte", /./);
    refused({ Team_A: { write: ["apps/a/"] } }, "targets.vault.applications.Team_A", /namespace name/);
    refused(
      { "team-a": { write: ["apps/a/"], read: ["sh%61red/"] } },
      "targets.vault.applications.team-a.read[0]",
      /ASCII/,
    );
  });

  it("has no application namespace unless configured", () => {
    assert.equal(parseVaultConfig({ backend }, "targets.vault").applications.size, 0);
  });
});

describe("application namespaces: refused objects claim nothing and copy nothing", () => {
  // A minimal informer: the two indexes only read list(), get() and register handlers.
  const objects = new Map<string, KubeObject & { spec: unknown }>();
  const informer = {
    addHandler: () => {},
    list: () => [...objects.values()],
    get: (key: string) => objects.get(key),
  } as unknown as Informer<KubeObject & { spec: unknown }>;
  const add = (namespace: string, name: string, created: string, spec: unknown) =>
    objects.set(`${namespace}/${name}`, {
      apiVersion: "ohmlab.fr/v1alpha1",
      kind: "VaultSeed",
      metadata: { namespace, name, uid: name, creationTimestamp: created },
      spec,
    });
  const admitted = (namespace: string, seed: CompiledSeed) =>
    admits(
      SCOPES,
      namespace,
      seed.path,
      seed.refs.map((r) => r.path),
    );

  it("an older application object on a platform path does not win it", () => {
    objects.clear();
    add("team-a", "grab", "2026-01-01T00:00:00Z", { path: "secret/platform/db", data: { a: "<random:8>" } });
    add("platform", "db", "2026-02-01T00:00:00Z", { path: "secret/platform/db", data: { a: "<random:8>" } });
    assert.equal(new PathClaims(informer, admitted).claimantOf("secret/platform/db"), "platform/db");
    // Without the allow-list, the older object would have won: the check is what decides.
    assert.equal(new PathClaims(informer).claimantOf("secret/platform/db"), "team-a/grab");
  });

  it("an application object cannot make the platform's references look like a cycle", () => {
    objects.clear();
    add("platform", "x", "2026-01-01T00:00:00Z", {
      path: "secret/platform/x",
      data: { k: "<ref:secret/platform/y#k>" },
    });
    // team-a declares the source path, copying back from x: a cycle, were it admitted.
    add("team-a", "y", "2026-01-01T00:00:00Z", {
      path: "secret/platform/y",
      data: { k: "<ref:secret/platform/x#k>" },
    });
    assert.equal(new RefGraph(informer, admitted).cycleOf("secret/platform/x"), undefined);
    assert.deepEqual(new RefGraph(informer).cycleOf("secret/platform/x"), [
      "secret/platform/x",
      "secret/platform/y",
    ]);
    assert.deepEqual(new RefGraph(informer, admitted).dependentsOf("secret/platform/x"), []);
  });
});
