import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { unsupportedFields } from "../../src/targets/openbao/unsupported.js";
import { ConfigError } from "../../src/targets/openbao/workload/config/errors.js";
import { renderSelfInitRequests } from "../../src/targets/openbao/workload/config/index.js";
import { type Entry, find, one, parseHcl, plain } from "../fixtures/openbao/golden/hcl-reader.js";

// biome-ignore lint/suspicious/noExplicitAny: tests spell out spec fields freely
const cluster = (spec: Record<string, any>): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "rk", namespace: "ns1" },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, ...spec },
  }) as unknown as OpenBaoCluster;

const recipients = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `r${i}`, pgpPublicKey: `key-${i}` }));

const base = {
  unseal: { type: "transit", transit: { address: "https://t:8200", keyName: "k", mountPath: "transit" } },
  selfInit: {
    enabled: true,
    requests: [{ name: "kv", operation: "update", path: "sys/mounts/kv", data: { type: "kv-v2" } }],
  },
  recoveryKeys: { initial: { shares: 3, threshold: 2, recipients: recipients(3) } },
};

describe("spec.recoveryKeys.initial", () => {
  it("renders sys/rotate/recovery/init once at self-init, one PGP key per share in recipient order, before the spec's requests", () => {
    const doc = parseHcl(renderSelfInitRequests(cluster(base)));
    const stanzas = find(doc, "initialize").map((e) => e.labels?.[0]);
    assert.deepEqual(stanzas, ["initial-recovery-keys", "operator"]);
    const request = one(
      one(doc, "initialize", "initial-recovery-keys").value as Entry[],
      "request",
      "create-initial-recovery-keys",
    );
    assert.deepEqual(plain(request.value), {
      operation: "update",
      path: "sys/rotate/recovery/init",
      data: { secret_shares: 3, secret_threshold: 2, backup: true, pgp_keys: ["key-0", "key-1", "key-2"] },
    });
    assert.deepEqual(unsupportedFields(cluster(base).spec), []);
  });

  it("nothing when not asked for", () => {
    const { recoveryKeys: _, ...rest } = base;
    const doc = parseHcl(renderSelfInitRequests(cluster(rest)));
    assert.deepEqual(
      find(doc, "initialize").map((e) => e.labels?.[0]),
      ["operator"],
    );
  });

  it("refuses what the schema cannot see, naming the field", () => {
    const refused = (spec: Record<string, unknown>, field: string) =>
      assert.throws(
        () => renderSelfInitRequests(cluster(spec)),
        (e: unknown) => e instanceof ConfigError && e.field === field,
      );
    refused(
      {
        ...base,
        selfInit: {
          enabled: true,
          requests: [{ name: "rk", operation: "update", path: "/sys/rotate/recovery/init/", data: {} }],
        },
      },
      "selfInit.requests[0].path",
    );
    refused({ ...base, unseal: { type: "static" } }, "recoveryKeys.initial");
    refused(
      { ...base, recoveryKeys: { initial: { shares: 3, threshold: 2, recipients: recipients(2) } } },
      "recoveryKeys.initial.recipients",
    );
    refused(
      { ...base, recoveryKeys: { initial: { shares: 2, threshold: 3, recipients: recipients(2) } } },
      "recoveryKeys.initial.threshold",
    );
    refused(
      {
        ...base,
        recoveryKeys: {
          initial: { shares: 1, threshold: 1, recipients: [{ name: "a", pgpPublicKey: " " }] },
        },
      },
      "recoveryKeys.initial.recipients[0].pgpPublicKey",
    );
  });
});
