import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse, parseAllDocuments } from "yaml";
import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { ApiError } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// Upstream-style manifests (test/fixtures/openbao/manifests) applied to the real API server with our
// generated CRDs installed, the way `kubectl apply --server-side --validate=strict` sends them: each
// is accepted whole (nothing pruned, nothing unknown), and hostile variants are refused with a cause
// naming the field, CEL rules included.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const MANIFESTS = join(root, "test", "fixtures", "openbao", "manifests");
const CRDS = ["openbao.org_openbaoclusters.yaml", "openbao.org_openbaorestores.yaml"];

const CLUSTER: ResourceType = {
  group: "openbao.org",
  version: "v1alpha1",
  kind: "OpenBaoCluster",
  plural: "openbaoclusters",
  namespaced: true,
};
const RESTORE: ResourceType = { ...CLUSTER, kind: "OpenBaoRestore", plural: "openbaorestores" };

type Json = Record<string, unknown>;

function loadManifests(): { file: string; doc: Json }[] {
  return readdirSync(MANIFESTS)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(MANIFESTS, file), "utf8")).map((d) => ({
        file,
        doc: d.toJS() as Json,
      })),
    );
}

/** Every leaf of `want` is in `got` with the same value: nothing the manifest said was dropped. */
function missingLeaves(want: unknown, got: unknown, path = ""): string[] {
  if (want !== null && typeof want === "object") {
    if (got === null || typeof got !== "object") return [`${path}: gone`];
    return Object.entries(want as Json).flatMap(([k, v]) =>
      missingLeaves(
        v,
        (got as Json)[k],
        Array.isArray(want) ? `${path}[${k}]` : path === "" ? k : `${path}.${k}`,
      ),
    );
  }
  return want === got ? [] : [`${path}: ${JSON.stringify(want)} stored as ${JSON.stringify(got)}`];
}

interface Cause {
  field?: string;
  message?: string;
}

/** The refusal's causes, or the whole message for errors that carry none (strict decoding). */
function refusal(e: unknown): { code: number; text: string; causes: Cause[] } {
  if (!(e instanceof ApiError)) throw e;
  const causes = ((e.details as { causes?: Cause[] } | undefined)?.causes ?? []) as Cause[];
  return { code: e.code, text: `${e.message} ${JSON.stringify(causes)}`, causes };
}

const clone = <T>(v: T): T => structuredClone(v);
const at = (o: Json, ...keys: string[]): Json => keys.reduce((x, k) => x[k] as Json, o);

interface Hostile {
  name: string;
  base: string;
  change: (o: Json) => void;
  /** The field the API server must name, as it spells it. */
  field: string;
  /** Words the refusal must contain besides the field. */
  says: string;
}

const HOSTILE: Hostile[] = [
  {
    name: "an unknown (misspelt) field",
    base: "minimal",
    change: (o) => {
      at(o, "spec")["replica"] = 3;
    },
    field: "spec.replica",
    says: "unknown field",
  },
  {
    name: "an unknown field deep in a seal block",
    base: "hardened",
    change: (o) => {
      at(o, "spec", "unseal", "awskms")["kms_key_id"] = "x";
    },
    field: "spec.unseal.awskms.kms_key_id",
    says: "unknown field",
  },
  {
    name: "a seal type without its block",
    base: "minimal",
    change: (o) => {
      at(o, "spec")["unseal"] = { type: "transit" };
    },
    field: "spec.unseal",
    says: "unseal.type transit needs unseal.transit",
  },
  {
    name: "a seal block of another type",
    base: "hardened",
    change: (o) => {
      at(o, "spec", "unseal")["gcpCloudKMS"] = {
        project: "p",
        region: "global",
        keyRing: "r",
        cryptoKey: "k",
      };
    },
    field: "spec.unseal",
    says: "unseal.gcpCloudKMS belongs to unseal.type gcpckms only",
  },
  {
    name: "a seal block missing a required setting",
    base: "hardened",
    change: (o) => {
      delete at(o, "spec", "unseal", "awskms")["kmsKeyID"];
    },
    field: "spec.unseal.awskms.kmsKeyID",
    says: "Required value",
  },
  {
    name: "ACME with both domain and domains",
    base: "acme",
    change: (o) => {
      at(o, "spec", "tls", "acme")["domains"] = ["bao.internal.example.com"];
    },
    field: "spec.tls.acme",
    says: "not both",
  },
  {
    name: "ACME mode without its block",
    base: "acme",
    change: (o) => {
      delete at(o, "spec", "tls")["acme"];
    },
    field: "spec.tls",
    says: "tls.mode ACME needs tls.acme",
  },
  {
    name: "an unknown audit device type",
    base: "hardened",
    change: (o) => {
      (at(o, "spec", "audit") as unknown as Json[])[0]!["type"] = "kafka";
    },
    field: "spec.audit[0].type",
    says: "Unsupported value",
  },
  {
    name: "a plugin checksum that is not SHA-256",
    base: "minimal",
    change: (o) => {
      at(o, "spec")["plugins"] = [
        { type: "secret", name: "kv-extra", version: "v1.0.0", binaryName: "kv-extra", sha256sum: "abc" },
      ];
    },
    field: "spec.plugins[0].sha256sum",
    says: "should be at least 64",
  },
  {
    name: "backup concurrency above upstream's bound",
    base: "backed-up",
    change: (o) => {
      at(o, "spec", "backup", "target")["concurrency"] = 11;
    },
    field: "spec.backup.target.concurrency",
    says: "less than or equal to 10",
  },
  {
    name: "a multipart size below S3's minimum",
    base: "backed-up",
    change: (o) => {
      at(o, "spec", "backup", "target")["partSize"] = 1024;
    },
    field: "spec.backup.target.partSize",
    says: "greater than or equal to 5242880",
  },
  {
    name: "a storage size that is not a quantity",
    base: "minimal",
    change: (o) => {
      at(o, "spec", "storage")["size"] = "ten gigs";
    },
    field: "spec.storage.size",
    says: "should match",
  },
  {
    name: "a version that is not semver",
    base: "minimal",
    change: (o) => {
      at(o, "spec")["version"] = "latest";
    },
    field: "spec.version",
    says: "should match",
  },
  {
    name: "zero voters",
    base: "minimal",
    change: (o) => {
      at(o, "spec")["replicas"] = 0;
    },
    field: "spec.replicas",
    says: "greater than or equal to 1",
  },
  {
    name: "more voters than the documented maximum",
    base: "minimal",
    change: (o) => {
      at(o, "spec")["replicas"] = 100;
    },
    field: "spec.replicas",
    says: "less than or equal to 9",
  },
  {
    name: "a self-init request name that cannot name an HCL block",
    base: "selfinit",
    change: (o) => {
      (at(o, "spec", "selfInit", "requests") as unknown as Json[])[0]!["name"] = "1-bad name";
    },
    field: "spec.selfInit.requests[0].name",
    says: "should match",
  },
  {
    name: "two self-init requests with one name",
    base: "selfinit",
    change: (o) => {
      const requests = at(o, "spec", "selfInit", "requests") as unknown as Json[];
      requests[1]!["name"] = requests[0]!["name"];
    },
    field: "spec.selfInit.requests[1]",
    says: "Duplicate value",
  },
  {
    name: "a Gateway route without enabled",
    base: "selfinit",
    change: (o) => {
      delete at(o, "spec", "gateway")["enabled"];
    },
    field: "spec.gateway.enabled",
    says: "Required value",
  },
  {
    name: "a number where an annotation value goes",
    base: "hardened",
    change: (o) => {
      at(o, "spec", "serviceAccount", "annotations")["count"] = 3 as unknown as string;
    },
    field: "spec.serviceAccount.annotations.count",
    says: "must be of type string",
  },
  {
    name: "an image verification failure policy upstream does not know",
    base: "hardened",
    change: (o) => {
      at(o, "spec", "imageVerification")["failurePolicy"] = "Ignore";
    },
    field: "spec.imageVerification.failurePolicy",
    says: "Unsupported value",
  },
  {
    name: "a restore that overrides the operation lock without force",
    base: "restore-nightly",
    change: (o) => {
      at(o, "spec")["overrideOperationLock"] = true;
    },
    field: "spec",
    says: "overrideOperationLock needs force: true",
  },
  {
    name: "a restore without a snapshot key",
    base: "restore-nightly",
    change: (o) => {
      delete at(o, "spec", "source")["key"];
    },
    field: "spec.source.key",
    says: "Required value",
  },
];

describe("upstream-style OpenBao manifests on the real API server, strict field validation", () => {
  let client: KubeClient;
  let ns: string;
  const manifests = loadManifests();
  let counter = 0;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    for (const file of CRDS) {
      const crd = parse(readFileSync(join(root, "deploy", "crds", file), "utf8")) as KubeObject;
      await client.apply(CUSTOM_RESOURCE_DEFINITION, crd, { fieldManager: "test-setup", force: true });
    }
    await eventually(
      async () => {
        client.resources.refresh();
        const served = await Promise.all(
          [CLUSTER, RESTORE].map((t) => client.resources.find(`${t.group}/${t.version}`, t.kind)),
        );
        return served.every(Boolean) || undefined;
      },
      120_000,
      "the OpenBao CRDs to be served",
    );
    ns = await freshNamespace(client, "openbao-api");
  });
  after(() => client?.close());

  /** Server-side apply with strict field validation, as `kubectl apply --server-side` does. */
  const applyStrict = (doc: Json, name?: string): Promise<KubeObject> => {
    const type = doc["kind"] === "OpenBaoRestore" ? RESTORE : CLUSTER;
    const metadata = { ...(doc["metadata"] as Json), namespace: ns, ...(name ? { name } : {}) };
    return client.request<KubeObject>({
      method: "PATCH",
      path: client.resourcePath(type, ns, metadata["name"] as string),
      query: { fieldManager: "upstream-user", fieldValidation: "Strict" },
      body: { ...doc, metadata },
      contentType: "application/apply-patch+yaml",
    });
  };

  /**
   * Create with strict field validation, as `kubectl create --validate=strict` does. The hostile
   * variants go this way: server-side apply reports unknown fields, duplicate list keys and wrongly
   * typed values from its typed-patch step as 500s without causes, while a create names them in a
   * 400 (strict decoding) or a 422 (schema and CEL).
   */
  const createStrict = (doc: Json, name: string): Promise<KubeObject> => {
    const type = doc["kind"] === "OpenBaoRestore" ? RESTORE : CLUSTER;
    return client.request<KubeObject>({
      method: "POST",
      path: client.resourcePath(type, ns),
      query: { fieldManager: "upstream-user", fieldValidation: "Strict" },
      body: { ...doc, metadata: { ...(doc["metadata"] as Json), namespace: ns, name } },
    });
  };

  it("has the six kinds of manifest the brief names", () => {
    assert.deepEqual(
      manifests.map((m) => m.file),
      [
        "acme.yaml",
        "backup-bluegreen.yaml",
        "hardened-external-tls.yaml",
        "minimal.yaml",
        "restore.yaml",
        "self-init.yaml",
      ],
    );
  });

  for (const { file, doc } of manifests) {
    it(`accepts ${file} whole, keeping every field it sets`, async () => {
      counter++;
      await createStrict(doc, `created-${counter}`);
      const stored = await applyStrict(doc);
      assert.deepEqual(missingLeaves(doc["spec"], (stored as unknown as Json)["spec"], "spec"), []);
      // Applying the same intent again changes nothing: the server stored exactly what was sent plus defaults.
      const again = await applyStrict(doc);
      assert.equal(again.metadata.resourceVersion, stored.metadata.resourceVersion);
    });
  }

  it("fills upstream's defaults", async () => {
    const minimal = manifests.find((m) => m.file === "minimal.yaml")!.doc;
    const stored = (await applyStrict(minimal, "defaults")) as unknown as Json;
    assert.equal(at(stored, "spec", "tls")["mode"], "OperatorManaged");
    assert.equal(at(stored, "spec")["deletionPolicy"], undefined);
    const restore = manifests.find((m) => m.file === "restore.yaml")!.doc;
    const target = at(
      (await applyStrict(restore, "defaults")) as unknown as Json,
      "spec",
      "source",
      "target",
    );
    assert.equal(target["concurrency"], 3);
    assert.equal(target["partSize"], 10485760);
    const selfInit = clone(manifests.find((m) => m.file === "self-init.yaml")!.doc);
    at(selfInit, "spec")["unseal"] = {};
    const sealed = (await applyStrict(selfInit, "unseal-default")) as unknown as Json;
    assert.equal(at(sealed, "spec", "unseal")["type"], "static");
  });

  for (const h of HOSTILE) {
    it(`refuses ${h.name}, naming ${h.field}`, async () => {
      const base = manifests.find((m) => (m.doc["metadata"] as Json)["name"] === h.base);
      assert.ok(base, `no manifest named ${h.base}`);
      const doc = clone(base.doc);
      h.change(doc);
      counter++;
      const outcome = await createStrict(doc, `hostile-${counter}`).then(
        () => undefined,
        (e: unknown) => refusal(e),
      );
      assert.ok(outcome, `${h.name}: accepted`);
      assert.ok([400, 422].includes(outcome.code), `${h.name}: answered ${outcome.code}: ${outcome.text}`);
      const named =
        outcome.causes.some((c) => c.field === h.field && (c.message ?? "").includes(h.says)) ||
        (outcome.text.includes(h.field) && outcome.text.includes(h.says));
      assert.ok(named, `${h.name}: expected "${h.field}" and "${h.says}" in ${outcome.text}`);
    });
  }
});
