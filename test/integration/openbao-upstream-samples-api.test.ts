import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { ApiError } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace } from "../support/kube.js";
import { installOpenBaoClusterCrd, installOpenBaoTenantCrd } from "../support/openbao-cluster.js";
import { type Json, upstreamDocuments, upstreamSamplesMissing } from "../support/upstream-samples.js";

// Part (a) of the proof that upstream openbao-operator's manifests work here: every OpenBaoCluster,
// OpenBaoRestore and OpenBaoTenant of its samples, exactly as written, is accepted by the real API server with our
// generated CRDs under strict field validation (a server-side dry-run, as `kubectl apply
// --server-side --dry-run=server --validate=strict` sends it), and nothing it sets is pruned.

const CLUSTER: ResourceType = {
  group: "openbao.org",
  version: "v1alpha1",
  kind: "OpenBaoCluster",
  plural: "openbaoclusters",
  namespaced: true,
};
const RESTORE: ResourceType = { ...CLUSTER, kind: "OpenBaoRestore", plural: "openbaorestores" };
const TENANT: ResourceType = { ...CLUSTER, kind: "OpenBaoTenant", plural: "openbaotenants" };
const TYPES: Record<string, ResourceType> = {
  OpenBaoCluster: CLUSTER,
  OpenBaoRestore: RESTORE,
  OpenBaoTenant: TENANT,
};

/** The kinds the samples carry that are not this project's, and why they are not sent. */
const NOT_OURS: Record<string, string> = {
  Certificate: "cert-manager's kind (the samples' TLS material), not served by this project",
  Issuer: "cert-manager's kind, not served by this project",
  Secret: "a core Secret with placeholder credentials the samples' clusters refer to",
};

/** Every leaf of `want` is in `got` with the same value: nothing the manifest said was dropped. */
function missingLeaves(want: unknown, got: unknown, path: string): string[] {
  if (want !== null && typeof want === "object") {
    if (got === null || typeof got !== "object") return [`${path}: gone`];
    return Object.entries(want as Json).flatMap(([k, v]) =>
      missingLeaves(v, (got as Json)[k], Array.isArray(want) ? `${path}[${k}]` : `${path}.${k}`),
    );
  }
  return want === got ? [] : [`${path}: ${JSON.stringify(want)} stored as ${JSON.stringify(got)}`];
}

const skip = upstreamSamplesMissing();

describe("upstream openbao-operator samples on the real API server, strict field validation", {
  skip,
}, () => {
  let client: KubeClient;
  let ns: string;
  const docs = skip ? [] : upstreamDocuments();
  const ours = docs.filter((d) => String(d.doc["kind"]) in TYPES);

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    // The target's CRDs as the chart ships them (deploy/crds is generated from the same schemas).
    await installOpenBaoClusterCrd(client);
    await installOpenBaoTenantCrd(client);
    ns = await freshNamespace(client, "upstream-samples");
  });
  after(() => client?.close());

  it("finds upstream's 17 OpenBaoCluster samples, its OpenBaoRestore and its OpenBaoTenant sample", () => {
    assert.equal(ours.filter((d) => d.doc["kind"] === "OpenBaoCluster").length, 17);
    assert.equal(ours.filter((d) => d.doc["kind"] === "OpenBaoRestore").length, 1);
    assert.equal(ours.filter((d) => d.doc["kind"] === "OpenBaoTenant").length, 1);
    const others = docs.filter((d) => !ours.includes(d)).map((d) => String(d.doc["kind"]));
    for (const kind of others)
      assert.ok(NOT_OURS[kind], `a sample carries a ${kind}, which the test does not know`);
  });

  for (const { file, doc } of ours) {
    it(`dry-runs ${file} unchanged, keeping every field it sets`, async () => {
      const type = TYPES[String(doc["kind"])]!;
      const metadata = doc["metadata"] as Json;
      const answer = await client
        .request<KubeObject>({
          method: "PATCH",
          path: client.resourcePath(type, ns, String(metadata["name"])),
          query: { fieldManager: "upstream-user", fieldValidation: "Strict", dryRun: "All" },
          body: { ...doc, metadata: { ...metadata, namespace: ns } },
          contentType: "application/apply-patch+yaml",
        })
        .catch((e: unknown) => {
          if (e instanceof ApiError)
            assert.fail(`${file} refused (${e.code}): ${e.message} ${JSON.stringify(e.details ?? {})}`);
          throw e;
        });
      assert.deepEqual(missingLeaves(doc["spec"], (answer as unknown as Json)["spec"], "spec"), []);
    });
  }

  for (const [kind, why] of Object.entries(NOT_OURS))
    it(`does not send the samples' ${kind} documents`, { skip: why }, () => {});
});
