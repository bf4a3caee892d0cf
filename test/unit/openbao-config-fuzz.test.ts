import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import {
  ConfigError,
  configEnv,
  renderConfig,
  renderSelfInitRequests,
} from "../../src/targets/openbao/workload/config/index.js";
import { type Entry, one, parseHcl, plain } from "../fixtures/openbao/golden/hcl-reader.js";

/**
 * Hostile strings in every place a user string reaches config.hcl: the parse tree must hold exactly
 * the stanzas and attributes the renderer means to write, and every string must read back as given.
 * The seed is printed on failure; FUZZ_SEED replays one run.
 */

const FRAGMENTS = [
  '"',
  "\\",
  "\\\\",
  '\\"',
  "${",
  "$${",
  "%{",
  "%%{",
  "}",
  "{",
  "]",
  "[",
  "\n",
  "\r\n",
  "\t",
  "\0",
  "#",
  "//",
  "/*",
  "*/",
  "<<EOF\n",
  "EOF",
  "=",
  ",",
  '" }\nseal "shamir" {\n',
  '"\nui = false\n#',
  '}\n}\nlistener "tcp" {',
  "\\u0022",
  "\\U0001F600",
  "é",
  "😀",
  "\u2028",
  "\ufeff",
  "\u007f",
  "__proto__",
  "constructor",
  " ",
  "a",
  "Z9",
  "-_.",
];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    // mulberry32: small, fast, good enough to vary inputs reproducibly.
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hostile(next: () => number): string {
  let out = "";
  const parts = 1 + Math.floor(next() * 6);
  for (let i = 0; i < parts; i++) {
    if (next() < 0.75) out += FRAGMENTS[Math.floor(next() * FRAGMENTS.length)];
    else {
      // Any code point but the surrogate range (lone surrogates are refused, tested elsewhere).
      let point = Math.floor(next() * 0x10ffff);
      if (point >= 0xd800 && point <= 0xdfff) point = 0x41;
      out += String.fromCodePoint(point);
    }
  }
  return out;
}

function keysOf(entries: Entry[]): string[] {
  return entries.map((e) => [e.key, ...e.labels].join("|")).sort();
}

describe("config.hcl under hostile strings", () => {
  const seed = Number(process.env["FUZZ_SEED"] ?? Date.now() % 1_000_000);
  const rounds = 300;

  it(`keeps the structure and every value (${rounds} rounds, seed ${seed})`, () => {
    const next = rng(seed);
    for (let round = 0; round < rounds; round++) {
      const s = () => hostile(next);
      const v = {
        auditPath: `p${s()}`,
        auditDesc: s(),
        auditFile: s(),
        optKey: `x${s()}`,
        optVal: s(),
        transitAddr: s(),
        transitToken: s(),
        transitKey: s(),
        prefix: s(),
        tags: [s(), s()],
        acmeDir: s(),
        acmeMail: s(),
        acmeDomain: s(),
        ttl: s(),
        logFile: s(),
        pluginType: s(),
        pluginName: s(),
        pluginCmd: s(),
        pluginArg: s(),
        reqPath: s(),
        dataKey: s(),
        dataVal: s(),
        nestedKey: s(),
        nestedVal: s(),
      };
      const cluster = {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: "fz", namespace: "ns" },
        spec: {
          version: "2.7.2",
          storage: { size: "1Gi" },
          replicas: 1,
          tls: {
            mode: "ACME",
            acme: { directoryURL: v.acmeDir, email: v.acmeMail, domains: [v.acmeDomain] },
          },
          configuration: { defaultLeaseTTL: v.ttl, logging: { file: v.logFile } },
          unseal: {
            type: "transit",
            transit: { address: v.transitAddr, token: v.transitToken, keyName: v.transitKey },
          },
          telemetry: { metricsPrefix: v.prefix, dogStatsdTags: v.tags },
          audit: [
            {
              type: "file",
              path: v.auditPath,
              description: v.auditDesc,
              fileOptions: { filePath: v.auditFile },
              options: { [v.optKey]: v.optVal },
            },
          ],
          plugins: [{ type: v.pluginType, name: v.pluginName, command: v.pluginCmd, args: [v.pluginArg] }],
          selfInit: {
            enabled: true,
            requests: [
              {
                name: "r1",
                operation: "update",
                path: v.reqPath,
                data: { [v.dataKey]: v.dataVal, nested: { [v.nestedKey]: [v.nestedVal, 7, false] } },
              },
            ],
          },
        },
      } as unknown as OpenBaoCluster;

      const context = `seed ${seed}, round ${round}`;
      let doc: Entry[];
      let init: Entry[];
      try {
        doc = parseHcl(renderConfig(cluster));
        init = parseHcl(renderSelfInitRequests(cluster));
      } catch (err) {
        assert.fail(`${context}: ${(err as Error).message}`);
      }
      assert.deepEqual(
        keysOf(doc),
        [
          `audit|file|${v.auditPath}`,
          "default_lease_ttl",
          "listener|tcp",
          "log_file",
          `plugin|${v.pluginType}|${v.pluginName}`,
          "plugin_directory",
          "seal|transit",
          "service_registration|kubernetes",
          "storage|raft",
          "telemetry",
          "ui",
        ].sort(),
        context,
      );
      assert.deepEqual(
        plain(one(doc, "audit", "file", v.auditPath).value),
        { description: v.auditDesc, options: { file_path: v.auditFile, [v.optKey]: v.optVal } },
        context,
      );
      assert.deepEqual(
        // The token reaches the pods through the environment, never through the file.
        plain(one(doc, "seal", "transit").value),
        { address: v.transitAddr, key_name: v.transitKey },
        context,
      );
      const listener = plain(one(doc, "listener", "tcp").value) as Record<string, unknown>;
      assert.deepEqual(
        [listener["tls_acme_ca_directory"], listener["tls_acme_email"], listener["tls_acme_domains"]],
        [v.acmeDir, v.acmeMail, [v.acmeDomain]],
        context,
      );
      assert.deepEqual(
        Object.keys(listener).sort(),
        [
          "address",
          "cluster_address",
          "tls_acme_ca_directory",
          "tls_acme_cache_path",
          "tls_acme_domains",
          "tls_acme_email",
        ],
        context,
      );
      assert.deepEqual(
        plain(one(doc, "telemetry").value),
        { metrics_prefix: v.prefix, dogstatsd_tags: v.tags },
        context,
      );
      assert.deepEqual(
        plain(one(doc, "plugin", v.pluginType, v.pluginName).value),
        { command: v.pluginCmd, args: [v.pluginArg] },
        context,
      );
      assert.equal(plain(one(doc, "default_lease_ttl").value), v.ttl, context);
      assert.equal(plain(one(doc, "log_file").value), v.logFile, context);

      assert.deepEqual(keysOf(init), ["initialize|operator"], context);
      const requests = one(init, "initialize", "operator").value as Entry[];
      assert.deepEqual(keysOf(requests), ["request|r1"], context);
      assert.deepEqual(
        plain(requests[0]!.value),
        {
          operation: "update",
          path: v.reqPath,
          data: { [v.dataKey]: v.dataVal, nested: { [v.nestedKey]: [v.nestedVal, 7, false] } },
        },
        context,
      );
    }
  });

  it("never lets a raw ${ or a raw newline into a quoted value", () => {
    const next = rng(seed + 1);
    for (let i = 0; i < 2000; i++) {
      const text = hostile(next);
      const cluster = {
        metadata: { name: "fz", namespace: "ns" },
        spec: { configuration: { logging: { file: text } } },
      } as unknown as OpenBaoCluster;
      const line = renderConfig(cluster)
        .split("\n")
        .find((l) => l.startsWith("log_file = "));
      assert.ok(line, `seed ${seed}: log_file on one line`);
      assert.ok(!line.includes("${") && !line.includes("%{"), `seed ${seed}: ${line}`);
      assert.equal(plain(parseHcl(line).at(0)!.value), text);
    }
  });

  it("answers any shape of spec with a config or a ConfigError, never another exception", () => {
    const next = rng(seed + 2);
    const junk = (depth: number): unknown => {
      const pick = Math.floor(next() * 8);
      if (pick === 0) return null;
      if (pick === 1) return hostile(next);
      if (pick === 2) return next() * 1000 - 500;
      if (pick === 3) return next() < 0.5;
      if (pick === 4) return depth > 2 ? [] : [junk(depth + 1), junk(depth + 1)];
      if (pick === 5)
        return depth > 2
          ? {}
          : { type: junk(depth + 1), name: junk(depth + 1), path: junk(depth + 1), x: junk(depth + 1) };
      return undefined;
    };
    const places = [
      "replicas",
      "tls",
      "tls.mode",
      "tls.enabled",
      "tls.acme",
      "tls.acme.domains",
      "tls.acme.domain",
      "tls.acme.directoryURL",
      "configuration",
      "configuration.logging",
      "configuration.listener",
      "configuration.listener.proxyProtocolBehavior",
      "configuration.plugin",
      "configuration.raft",
      "configuration.acmeCARoot",
      "selfInit",
      "selfInit.requests",
      "unseal",
      "unseal.type",
      "unseal.static",
      "unseal.transit",
      "unseal.kms",
      "audit",
      "telemetry",
      "telemetry.dogStatsdTags",
      "plugins",
    ];
    for (let round = 0; round < 5000; round++) {
      const spec: Record<string, unknown> = { selfInit: { enabled: true } };
      for (let j = 0; j < 3; j++) {
        const path = places[Math.floor(next() * places.length)]!.split(".");
        let at = spec;
        for (const k of path.slice(0, -1)) {
          const inner = at[k];
          if (typeof inner !== "object" || inner === null || Array.isArray(inner)) at[k] = {};
          at = at[k] as Record<string, unknown>;
        }
        at[path.at(-1)!] = junk(0);
      }
      const cluster = { metadata: { name: "a", namespace: "b" }, spec } as unknown as OpenBaoCluster;
      for (const render of [renderConfig, renderSelfInitRequests, configEnv]) {
        try {
          render(cluster);
        } catch (err) {
          if (!(err instanceof ConfigError))
            assert.fail(`seed ${seed}, round ${round}, ${render.name}: ${err} for ${JSON.stringify(spec)}`);
        }
      }
    }
  });
});
