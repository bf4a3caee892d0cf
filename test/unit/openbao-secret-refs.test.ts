import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../src/apis/openbaorestore.js";
import { checkPrerequisites } from "../../src/targets/openbao/adminops/backup/prerequisites.js";
import { validateRestore } from "../../src/targets/openbao/restore/validate.js";
import { validateOpenBaoDocuments } from "../../src/targets/openbao/validate/index.js";
import {
  emptyClusterReferences,
  emptyRestoreReferences,
  namedPullSecrets,
} from "../../src/targets/openbao/validate/secret-refs.js";

// Secret references upstream lets name "" (its default): accepted, reported by field, and never
// read as a Secret named "" nor as "none" (which would fall back to a credential nobody chose).

const fields = (spec: unknown) => emptyClusterReferences(spec).map((r) => r.field);

describe("openbao Secret references that name nothing", () => {
  it("each cluster reference is named by its field; named ones and JWT-overridden tokens are not", () => {
    const spec = {
      backup: { tokenSecretRef: {}, target: { bucket: "b", credentialsSecretRef: { name: "" } } },
      upgrade: { tokenSecretRef: { name: " " } },
      unseal: { type: "awskms", credentialsSecretRef: {} },
      imagePullSecrets: [{ name: "pull" }, {}],
    };
    assert.deepEqual(fields(spec), [
      "spec.backup.target.credentialsSecretRef.name",
      "spec.backup.tokenSecretRef.name",
      "spec.upgrade.tokenSecretRef.name",
      "spec.unseal.credentialsSecretRef.name",
      "spec.imagePullSecrets[1].name",
    ]);
    assert.match(emptyClusterReferences(spec)[1]!.message, /^is empty: backups wait/);
    assert.deepEqual(
      fields({
        backup: { jwtAuthRole: "r", tokenSecretRef: {} },
        upgrade: { jwtAuthRole: "u", tokenSecretRef: {} },
      }),
      [],
    );
    assert.deepEqual(
      fields({ backup: { tokenSecretRef: { name: "t" } }, imagePullSecrets: [{ name: "p" }] }),
      [],
    );
    assert.deepEqual(fields(undefined), []);
  });

  it("pull Secrets that name nothing stay off the pods", () => {
    assert.deepEqual(namedPullSecrets([{ name: "pull" }, {}, { name: "" }]), [{ name: "pull" }]);
    assert.equal(namedPullSecrets([{}]), undefined);
    assert.equal(namedPullSecrets(undefined), undefined);
  });

  it("a backup waits with SecretReferenceMissingName instead of falling back", () => {
    const cluster = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "bao", namespace: "ns" },
      spec: {
        version: "2.4.1",
        storage: { size: "1Gi" },
        backup: { schedule: "@daily", tokenSecretRef: { name: "" }, target: { bucket: "b" } },
      },
      status: { initialized: true },
    } as unknown as OpenBaoCluster;
    assert.deepEqual(checkPrerequisites({ cluster, secretsPresent: new Set(), holder: "h" }), {
      ok: false,
      reason: "SecretReferenceMissingName",
      message:
        "spec.backup.tokenSecretRef.name is empty: backups wait until it names the token Secret (or it is left out and spec.backup.jwtAuthRole set)",
    });
  });

  it("a restore that names nothing fails at once (it is immutable), naming the field", () => {
    const restore = {
      metadata: { name: "r", namespace: "ns" },
      spec: {
        cluster: "bao",
        source: { key: "k", target: { bucket: "b", credentialsSecretRef: {} } },
        tokenSecretRef: { name: "" },
      },
    } as unknown as OpenBaoRestore;
    assert.deepEqual(
      emptyRestoreReferences(restore.spec).map((r) => r.field),
      ["spec.source.target.credentialsSecretRef.name", "spec.tokenSecretRef.name"],
    );
    const v = validateRestore({ restore, secretsFound: new Set() });
    assert.equal(v.kind, "fail");
    assert.equal(v.kind === "fail" && v.reason, "SecretReferenceMissingName");
    assert.match(
      v.kind === "fail" ? v.message : "",
      /^spec\.source\.target\.credentialsSecretRef\.name is empty/,
    );
  });

  it("validate reports each as a warning (the API server accepts them), naming the field", () => {
    const doc = {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: "bao", namespace: "ns" },
      spec: { version: "2.4.1", storage: { size: "1Gi" }, upgrade: { tokenSecretRef: {} } },
    };
    const problems = validateOpenBaoDocuments([{ file: "c.yaml", line: 1, document: 1, doc }]);
    assert.deepEqual(
      problems.map((p) => [p.key, p.severity]),
      [["spec.upgrade.tokenSecretRef.name", "warning"]],
    );
  });
});
