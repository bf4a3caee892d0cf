import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { validateStep } from "../../src/targets/openbao/steps/validate.js";
import { checkClusterSpec } from "../../src/targets/openbao/validate/cluster.js";
import { renderConfig } from "../../src/targets/openbao/workload/config/index.js";
import {
  isCredentialName,
  pluginEnvCredentials,
} from "../../src/targets/openbao/workload/config/plugin-env.js";
import {
  buildConfigObject,
  buildStatefulSet,
} from "../../src/targets/openbao/workload/statefulsets/build.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON fixtures
type Json = any;

const SHA = "a".repeat(64);

function cluster(spec: Record<string, unknown>): OpenBaoCluster {
  return {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns1", uid: "u1", generation: 1 },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, ...spec },
  } as unknown as OpenBaoCluster;
}

const plugin = (env?: string[]) => ({
  type: "secret",
  name: "example",
  image: "ghcr.io/example/openbao-plugin",
  version: "1.2.3",
  binaryName: "openbao-plugin",
  sha256sum: SHA,
  ...(env ? { env } : {}),
});

const configSourceOf = (c: OpenBaoCluster): Json =>
  (
    buildStatefulSet(c, {
      component: "server",
      replicas: 3,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime: { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] },
    }) as Json
  ).spec.template.spec.volumes.find((v: Json) => v.name === "config").projected.sources[0];

describe("spec.plugins[].env stays out of ConfigMaps", () => {
  it("a plugin with environment keeps config.hcl in a Secret, the pods mount it from there", () => {
    // A harmless name can carry a password (a DSN): any environment moves the file, not only a
    // credential-named one.
    const c = cluster({
      plugins: [plugin(["LOG_FORMAT=json", "DATABASE_URL=postgres://u:canary-dsn-pw@db/x"])],
    });
    const text = renderConfig(c);
    assert.ok(text.includes("canary-dsn-pw"), "OpenBao reads a plugin's environment only from the file");
    const obj = buildConfigObject(c, text) as Json;
    assert.equal(obj.kind, "Secret");
    assert.equal(obj.metadata.name, "demo-config");
    assert.ok(!JSON.stringify(obj).includes("canary-dsn-pw"), "base64 in data, not text");
    assert.equal(Buffer.from(obj.data["config.hcl"], "base64").toString(), text);
    assert.deepEqual(configSourceOf(c).secret?.name, "demo-config");
    assert.equal(configSourceOf(c).configMap, undefined);
    assert.ok(!JSON.stringify(configSourceOf(c)).includes("canary"));
    // Neither is a credential by its name: no SecurityRisk for them.
    assert.deepEqual(pluginEnvCredentials(c.spec as never), []);
  });

  it("a plugin without environment, and no plugin at all, keep the ConfigMap", () => {
    for (const c of [cluster({ plugins: [plugin()] }), cluster({ plugins: [plugin([])] }), cluster({})]) {
      assert.equal((buildConfigObject(c, renderConfig(c)) as Json).kind, "ConfigMap");
      assert.ok(configSourceOf(c).configMap);
    }
  });

  it("names credential variables by their last word, not settings that merely mention one", () => {
    for (const n of [
      "GITHUB_TOKEN",
      "DB_PASSWORD",
      "AWS_SECRET_ACCESS_KEY",
      "SIGNING_PRIVATE_KEY",
      "API_KEY",
      "client-secret",
      "HSM_PIN",
      "GOOGLE_CREDENTIALS",
    ])
      assert.equal(isCredentialName(n), true, n);
    for (const n of ["TOKEN_TTL", "PIN_LENGTH", "AWS_ACCESS_KEY_ID", "LOG_LEVEL", "KEY_NAME", "REGION"])
      assert.equal(isCredentialName(n), false, n);
  });

  it("a credential-named variable is a SecurityRisk field (path only) and refused by Hardened", async () => {
    const spec = {
      plugins: [plugin(["REGION=eu"]), { ...plugin(["API_TOKEN=canary-plugin-token"]), name: "other" }],
    };
    const c = cluster(spec);
    const result: Json = {};
    const outcome = validateStep({ cluster: c, result } as never);
    assert.equal(outcome.kind, "continue");
    assert.deepEqual(result.inlineCredentials, ["spec.plugins[1].env[0]"]);

    const hardened = checkClusterSpec("demo", { ...c.spec, profile: "Hardened" } as never).filter((p) =>
      p.field.startsWith("spec.plugins"),
    );
    assert.deepEqual(
      hardened.map((p) => p.field),
      ["spec.plugins[1].env[0]"],
    );
    assert.match(hardened[0]!.message, /Hardened profile refuses.*self-init request/);
    assert.ok(!JSON.stringify(hardened).includes("canary"));
    const dev = checkClusterSpec("demo", { ...c.spec, profile: "Development" } as never);
    assert.ok(!dev.some((p) => p.field.startsWith("spec.plugins")), "outside Hardened it is accepted");
  });
});
