import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { buildCrd } from "../../src/apis/crd.js";
import {
  GitLabCoreApiVersion,
  GitLabCoreDefinition,
  NetworkingOneModeMessage,
  type VersionShape,
  VersionUnionRules,
} from "../../src/apis/gitlabcore.js";
import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { ApiError } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { validateGitLabCore } from "../../src/targets/gitlab/validate.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// The GitLabCore definition on the real API server, applied as a user applies manifests
// (server-side apply with fieldValidation=Strict): good manifests of every union branch are stored
// with their defaults; hostile ones are refused with the field named; and the offline `validate`
// agrees with the server on every version-union combination and on hostile host names.

const root = fileURLToPath(new URL("../../../", import.meta.url));

const GITLABCORE: ResourceType = {
  group: "apps.gitlab.com",
  version: "v2alpha1",
  kind: "GitLabCore",
  plural: "gitlabcores",
  namespaced: true,
};

type Obj = Record<string, unknown>;

interface Cause {
  field?: string;
  message?: string;
  reason?: string;
}

describe("GitLabCore on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let counter = 0;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    const crd = buildCrd(GitLabCoreDefinition) as unknown as KubeObject;
    await client.apply(CUSTOM_RESOURCE_DEFINITION, crd, { fieldManager: "gitlab-api-test", force: true });
    await eventually(
      async () => {
        client.resources.refresh();
        return (await client.resources.find(GitLabCoreApiVersion, "GitLabCore")) ? true : undefined;
      },
      120_000,
      "GitLabCore to be served",
    );
    ns = await freshNamespace(client, "gitlab-api");
  });
  after(() => client.close());

  const manifest = (spec: Obj): Obj => ({
    apiVersion: GitLabCoreApiVersion,
    kind: "GitLabCore",
    metadata: { name: `gitlab-${++counter}`, namespace: ns },
    spec: { version: { type: "Static", version: "10.4.0" }, hostname: "gitlab.example.com", ...spec },
  });

  /** Server-side apply with Strict field validation, as `kubectl apply --server-side` does. */
  const applyStrict = (obj: Obj, dryRun = false): Promise<KubeObject> =>
    client.request<KubeObject>({
      method: "PATCH",
      path: client.resourcePath(GITLABCORE, ns, (obj["metadata"] as { name: string }).name),
      query: {
        fieldManager: "gitlab-api-test",
        fieldValidation: "Strict",
        force: true,
        dryRun: dryRun ? "All" : undefined,
      },
      body: obj,
      contentType: "application/apply-patch+yaml",
    });

  const refusal = async (obj: Obj, dryRun = true): Promise<{ message: string; causes: Cause[] }> => {
    try {
      await applyStrict(obj, dryRun);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return { message: e.message, causes: ((e.details as { causes?: Cause[] })?.causes ?? []) as Cause[] };
    }
    assert.fail(`accepted: ${JSON.stringify(obj["spec"])}`);
  };

  it("stores the sample and every union branch, with the definition's defaults", async () => {
    const sample = parse(readFileSync(join(root, "deploy/samples/gitlabcore.yaml"), "utf8")) as Obj;
    const good: Obj[] = [
      { ...sample, metadata: { name: `gitlab-${++counter}`, namespace: ns } },
      manifest({}),
      manifest({
        version: { type: "Static", versionRef: { name: "platform-versions", key: "chartVersion" } },
      }),
      manifest({ version: { type: "Patch", minor: "10.3" } }),
      manifest({ version: { type: "Latest" } }),
      manifest({ version: { type: "Latest", major: 10 } }),
      manifest({ version: { type: "Previous", major: 10 } }),
      manifest({ version: { type: "OldestSupported", major: 10 } }),
      manifest({ hostname: "example.com", networking: { envoyGatewayController: {} } }),
      manifest({
        networking: {
          gatewayClass: {
            name: "eg",
            certManager: {
              issuerRef: { name: "pca", kind: "AWSPCAIssuer", group: "awspca.cert-manager.io" },
            },
          },
        },
      }),
      manifest({ networking: { gateway: { name: "shared", namespace: "infra" } } }),
      manifest({
        openbao: {
          postgresql: { host: "bao-pg.db.svc", passwordSecretRef: { name: "bao", key: "password" } },
        },
        chart: { values: { anything: { nested: [{ deep: true }] }, global: { time_zone: "UTC" } } },
        upgrade: { skipBatchedMigrationCheck: true },
      }),
    ];
    const stored: KubeObject[] = [];
    for (const o of good) {
      try {
        stored.push(await applyStrict(o));
      } catch (e) {
        assert.fail(`refused: ${(e as Error).message}\n${JSON.stringify(o["spec"])}`);
      }
      // The offline check agrees: nothing to say about what the server stores.
      assert.deepEqual(validateGitLabCore(o), [], JSON.stringify(o["spec"]));
    }
    const spec = (i: number) => (stored[i] as unknown as { spec: Obj }).spec;
    assert.equal(spec(1)["edition"], "ee");
    assert.deepEqual((spec(2)["version"] as Obj)["versionRef"], {
      kind: "ConfigMap",
      name: "platform-versions",
      key: "chartVersion",
    });
    assert.deepEqual((spec(11)["openbao"] as { postgresql: Obj }).postgresql, {
      host: "bao-pg.db.svc",
      port: 5432,
      database: "openbao",
      username: "openbao",
      passwordSecretRef: { name: "bao", key: "password" },
    });
    assert.deepEqual((spec(11)["chart"] as Obj)["values"], {
      anything: { nested: [{ deep: true }] },
      global: { time_zone: "UTC" },
    });
  });

  it("refuses unknown fields under Strict validation, naming them", async () => {
    // Server-side apply names the first undeclared field it meets; each is tried alone.
    for (const [spec, path] of [
      [{ upgrade: { skipBatchedMigrationChecks: true } }, ".spec.upgrade.skipBatchedMigrationChecks"],
      [{ hostnmae: "x" }, ".spec.hostnmae"],
      [{ version: { type: "Latest", channel: "stable" } }, ".spec.version.channel"],
    ] as const) {
      const r = await refusal(manifest(spec));
      assert.ok(r.message.includes(`${path}: field not declared in schema`), r.message);
    }
    const offline = validateGitLabCore(
      manifest({ upgrade: { skipBatchedMigrationChecks: true }, hostnmae: "x" }),
    );
    assert.deepEqual(offline.map((p) => p.field).sort(), [
      "spec.hostnmae",
      "spec.upgrade.skipBatchedMigrationChecks",
    ]);
  });

  it("refuses hostile host names at spec.hostname, and validate refuses them too", async () => {
    const hostile = [
      "10.0.0.1",
      "gitlab.example.com.",
      "localhost",
      "Gitlab.example.com",
      "gitlab.münchen.de",
      "gitlab..example.com",
      `${"a".repeat(64)}.example.com`,
      "gitlab.example.123",
      "-gitlab.example.com",
      "gitlab_1.example.com",
    ];
    for (const hostname of hostile) {
      const r = await refusal(manifest({ hostname }));
      assert.ok(
        r.causes.some((c) => c.field === "spec.hostname"),
        `${hostname}: ${JSON.stringify(r.causes)}`,
      );
      assert.ok(
        validateGitLabCore(manifest({ hostname })).some((p) => p.field === "spec.hostname"),
        `validate accepted ${hostname}`,
      );
    }
    // A public suffix passes the definition (no list there) but not validate, nor the reconciler.
    await applyStrict(manifest({ hostname: "co.uk" }), true);
    assert.deepEqual(
      validateGitLabCore(manifest({ hostname: "co.uk" })).map((p) => p.field),
      ["spec.hostname"],
    );
  });

  it("refuses broken enums and patterns, naming the field", async () => {
    const cases: [Obj, string][] = [
      [{ edition: "premium" }, "spec.edition"],
      [{ version: { type: "Static", version: "latest" } }, "spec.version.version"],
      [{ version: { type: "Patch", minor: "10" } }, "spec.version.minor"],
      [{ version: { type: "Nightly" } }, "spec.version.type"],
      [
        { version: { type: "Static", versionRef: { kind: "Secret", name: "v", key: "k" } } },
        "spec.version.versionRef.kind",
      ],
      [
        {
          networking: {
            gatewayClass: { name: "eg", certManager: { issuerRef: { name: "i", kind: "issuer" } } },
          },
        },
        "spec.networking.gatewayClass.certManager.issuerRef.kind",
      ],
      [{ openbao: { postgresql: { host: "h" } } }, "spec.openbao.postgresql.passwordSecretRef"],
    ];
    for (const [spec, field] of cases) {
      const r = await refusal(manifest(spec));
      assert.ok(
        r.causes.some((c) => c.field === field),
        `${JSON.stringify(spec)}: no cause names ${field}: ${JSON.stringify(r.causes)}`,
      );
      assert.ok(validateGitLabCore(manifest(spec)).length > 0, `validate accepted ${JSON.stringify(spec)}`);
    }
  });

  it("refuses two networking modes with the CEL message", async () => {
    const r = await refusal(
      manifest({ networking: { gateway: { name: "g" }, gatewayClass: { name: "c" } } }),
    );
    assert.ok(
      r.causes.some((c) => c.field === "spec.networking" && c.message?.includes(NetworkingOneModeMessage)),
    );
  });

  it("the version union: the server's CEL and validate's twins agree on every combination", async () => {
    const fields: [keyof VersionShape, unknown][] = [
      ["version", "10.4.0"],
      ["versionRef", { name: "v", key: "chart" }],
      ["minor", "10.4"],
      ["major", 10],
    ];
    const combos: VersionShape[] = [];
    for (const type of ["Static", "Patch", "Latest", "Previous", "OldestSupported"])
      for (let mask = 0; mask < 16; mask++) {
        const v: Obj = { type };
        fields.forEach(([k, value], i) => {
          if (mask & (1 << i)) v[k] = value;
        });
        combos.push(v);
      }
    const disagreements: string[] = [];
    let refused = 0;
    for (const v of combos) {
      const expected = VersionUnionRules.filter((r) => !r.holds(v))
        .map((r) => r.message)
        .sort();
      let got: string[] = [];
      try {
        await applyStrict(manifest({ version: v }), true);
      } catch (e) {
        if (!(e instanceof ApiError) || e.code !== 422) throw e;
        refused++;
        const causes = ((e.details as { causes?: Cause[] })?.causes ?? []) as Cause[];
        got = causes
          .filter((c) => c.field === "spec.version")
          .map(
            (c) => VersionUnionRules.find((r) => c.message?.includes(r.message))?.message ?? `? ${c.message}`,
          )
          .sort();
      }
      if (JSON.stringify(got) !== JSON.stringify(expected))
        disagreements.push(
          `${JSON.stringify(v)}: server ${JSON.stringify(got)}, twins ${JSON.stringify(expected)}`,
        );
      const offline = validateGitLabCore(manifest({ version: v }))
        .filter((p) => p.field === "spec.version")
        .map((p) => p.message)
        .sort();
      if (JSON.stringify(offline) !== JSON.stringify(expected))
        disagreements.push(
          `${JSON.stringify(v)}: validate ${JSON.stringify(offline)}, twins ${JSON.stringify(expected)}`,
        );
    }
    assert.deepEqual(disagreements, []);
    // Most combinations break a rule; one or two per type are valid (Static: version or versionRef;
    // Latest, Previous, OldestSupported: with or without major — Previous and OldestSupported take
    // no major since issue 44, on purpose, as GitLab's unattended upgrades specify).
    assert.equal(combos.length - refused, 9);
  });
});
