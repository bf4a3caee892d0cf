import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { buildCrd } from "../../src/apis/crd.js";
import {
  ClickHouseUrlMessage,
  ControllerNameImmutableMessage,
  CustomCAOneSourceMessage,
  GitLabCoreApiVersion,
  GitLabCoreDefinition,
  HostOrDomainMessage,
  OpenBaoOneNameMessage,
} from "../../src/apis/gitlabcore.js";
import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { ApiError } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { validateGitLabCore } from "../../src/targets/gitlab/validate.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// The newer GitLabCore fields (issue 44) on the real API server: customCAs entries take exactly one
// source, spec.clickhouse needs all four fields and an http(s) URL, exactly one of hostname and
// domain, not both names of openbao, and envoyGatewayController.controllerName cannot change. Each
// refusal is checked against the offline `validate` too, which must agree.

const GITLABCORE: ResourceType = {
  group: "apps.gitlab.com",
  version: "v2alpha1",
  kind: "GitLabCore",
  plural: "gitlabcores",
  namespaced: true,
};

type Obj = Record<string, unknown>;

const clickhouse = {
  url: "https://ch.example.com:8443",
  database: "gitlab_main",
  user: "gitlab",
  passwordSecretRef: { name: "ch", key: "password" },
};
const openbao = { postgresql: { host: "pg.example.com", passwordSecretRef: { name: "bao", key: "pw" } } };

describe("GitLabCore 2026 fields on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let counter = 0;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    const crd = buildCrd(GitLabCoreDefinition) as unknown as KubeObject;
    await client.apply(CUSTOM_RESOURCE_DEFINITION, crd, { fieldManager: "gitlab-api-2026", force: true });
    await eventually(
      async () => {
        client.resources.refresh();
        return (await client.resources.find(GitLabCoreApiVersion, "GitLabCore")) ? true : undefined;
      },
      120_000,
      "GitLabCore to be served",
    );
    ns = await freshNamespace(client, "gitlab-api-2026");
  });
  after(() => client.close());

  const manifest = (spec: Obj, name = `gitlab-${++counter}`): Obj => ({
    apiVersion: GitLabCoreApiVersion,
    kind: "GitLabCore",
    metadata: { name, namespace: ns },
    spec: { version: { type: "Static", version: "10.4.0" }, hostname: "gitlab.example.com", ...spec },
  });
  const withoutHostname = (spec: Obj, name?: string): Obj => {
    const m = manifest(spec, name);
    const { hostname: _, ...rest } = m["spec"] as Obj;
    return { ...m, spec: rest };
  };

  const applyStrict = (obj: Obj, dryRun = false): Promise<KubeObject> =>
    client.request<KubeObject>({
      method: "PATCH",
      path: client.resourcePath(GITLABCORE, ns, (obj["metadata"] as { name: string }).name),
      query: {
        fieldManager: "gitlab-api-2026",
        fieldValidation: "Strict",
        force: true,
        dryRun: dryRun ? "All" : undefined,
      },
      body: obj,
      contentType: "application/apply-patch+yaml",
    });

  /** The server's refusal message; fails the test if the object is accepted. */
  const refusal = async (obj: Obj, dryRun = true): Promise<string> => {
    try {
      await applyStrict(obj, dryRun);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return e.message;
    }
    return assert.fail(`accepted: ${JSON.stringify(obj["spec"])}`);
  };

  it("stores well-formed newer fields, and validate has nothing to say about them", async () => {
    const good = [
      withoutHostname({ domain: "example.com", clickhouse, components: { openbao } }),
      manifest({
        certificates: {
          customCAs: [{ secret: "corp-ca" }, { configMap: "trust-bundle", keys: ["root.pem", "int.pem"] }],
        },
        clickhouse: { ...clickhouse, url: "http://clickhouse.db.svc:8123" },
      }),
      manifest({ networking: { gatewayClass: { name: "eg", configureEnvoy: true } } }),
      manifest({ networking: { gateway: { name: "gw", configureEnvoy: false } } }),
      manifest({
        networking: {
          envoyGatewayController: { controllerName: "gateway.envoyproxy.io/gatewayclass-controller" },
        },
      }),
    ];
    for (const o of good) {
      try {
        await applyStrict(o, true);
      } catch (e) {
        assert.fail(`refused: ${(e as Error).message}\n${JSON.stringify(o["spec"])}`);
      }
      assert.deepEqual(validateGitLabCore(o), [], JSON.stringify(o["spec"]));
    }
  });

  it("refuses a CA entry with both sources or none, as validate does", async () => {
    for (const entry of [{ secret: "a", configMap: "b" }, {}, { keys: ["ca.crt"] }]) {
      const o = manifest({ certificates: { customCAs: [{ secret: "ok" }, entry] } });
      const message = await refusal(o);
      assert.ok(message.includes(CustomCAOneSourceMessage), message);
      assert.ok(message.includes("spec.certificates.customCAs[1]"), message);
      assert.deepEqual(
        validateGitLabCore(o).map((p) => p.field),
        ["spec.certificates.customCAs[1]"],
      );
    }
  });

  it("refuses a ClickHouse connection without any of its four fields, or with a non-http(s) URL", async () => {
    for (const k of ["url", "database", "user", "passwordSecretRef"]) {
      const partial: Obj = { ...clickhouse };
      delete partial[k];
      const o = manifest({ clickhouse: partial });
      const message = await refusal(o);
      assert.ok(message.includes(`spec.clickhouse.${k}: Required value`), message);
      assert.ok(validateGitLabCore(o).length > 0, `validate accepted a clickhouse without ${k}`);
    }
    for (const url of ["tcp://ch:9000", "ch.example.com:8443", "https://", "clickhouse://ch:9000"]) {
      const o = manifest({ clickhouse: { ...clickhouse, url } });
      const message = await refusal(o);
      assert.ok(message.includes(ClickHouseUrlMessage), `${url}: ${message}`);
      assert.deepEqual(
        validateGitLabCore(o).map((p) => `${p.field}: ${p.message}`),
        [`spec.clickhouse.url: ${ClickHouseUrlMessage}`],
        url,
      );
    }
  });

  it("takes exactly one of hostname and domain, and one name of openbao", async () => {
    for (const o of [manifest({ domain: "example.com" }), withoutHostname({})]) {
      const message = await refusal(o);
      assert.ok(message.includes(HostOrDomainMessage), message);
      assert.deepEqual(
        validateGitLabCore(o).map((p) => p.message),
        [HostOrDomainMessage],
      );
    }
    const both = manifest({ openbao, components: { openbao } });
    const message = await refusal(both);
    assert.ok(message.includes(OpenBaoOneNameMessage), message);
    assert.deepEqual(
      validateGitLabCore(both).map((p) => p.message),
      [OpenBaoOneNameMessage],
    );
    // A malformed domain is refused at its own field.
    const bad = await refusal(withoutHostname({ domain: "Example..com" }));
    assert.ok(bad.includes("spec.domain"), bad);
  });

  it("refuses a change of envoyGatewayController.controllerName once stored, and keeps it unchanged", async () => {
    const name = "gitlab-controller";
    const first = "gateway.envoyproxy.io/gatewayclass-controller";
    await applyStrict(manifest({ networking: { envoyGatewayController: { controllerName: first } } }, name));
    const message = await refusal(
      manifest({ networking: { envoyGatewayController: { controllerName: "example.com/other" } } }, name),
      false,
    );
    assert.ok(message.includes(ControllerNameImmutableMessage), message);
    // The same value again is no change and is accepted.
    const again = await applyStrict(
      manifest({ networking: { envoyGatewayController: { controllerName: first } } }, name),
    );
    const stored = (again as unknown as { spec: { networking: { envoyGatewayController: Obj } } }).spec;
    assert.equal(stored.networking.envoyGatewayController["controllerName"], first);
  });
});
