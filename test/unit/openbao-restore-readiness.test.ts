import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../src/apis/openbaorestore.js";
import { OpenBaoRestoreReason } from "../../src/apis/openbaorestore-names.js";
import type { KubeObject } from "../../src/runtime/types.js";
import type { Lookup } from "../../src/targets/openbao/readiness/facts.js";
import {
  RESTORE_CONFIGURATION_CONTRACT,
  restoreConfiguration,
  withinRestoreContract,
} from "../../src/targets/openbao/readiness/restore.js";
import { restoreAuth, restoreTokenLabelsMissing } from "../../src/targets/openbao/restore/validate.js";

// RestoreConfigurationReady, pure: every reason of upstream 0.5's contract reached from a restore,
// its cluster and the Secrets a pass read, with the login decided as the restore controller does.

// biome-ignore lint/suspicious/noExplicitAny: specs are built loosely in tests
type Spec = Record<string, any>;
const cluster = (spec: Spec = {}): OpenBaoCluster =>
  ({
    metadata: { name: "bao", namespace: "vault", generation: 1 },
    spec: { version: "2.4.0", replicas: 1, profile: "Development", ...spec },
  }) as unknown as OpenBaoCluster;
const restore = (spec: Spec = {}, target: Spec = { provider: "s3", bucket: "b" }): OpenBaoRestore =>
  ({
    metadata: { name: "r", namespace: "vault", generation: 1 },
    spec: { cluster: "bao", source: { key: "k.snap", target }, ...spec },
  }) as unknown as OpenBaoRestore;
const LABELLED = { "openbao.org/cluster": "bao", "openbao.org/credential-purpose": "restore-token" };
const secret = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { name, namespace: "vault", labels },
});

/** The evaluation as the restore controller makes it: its login decision, the label check, the reads. */
function evaluate(r: OpenBaoRestore, c: OpenBaoCluster, read: Record<string, KubeObject | "forbidden">) {
  const labels = new Map(
    Object.entries(read).flatMap(([n, s]) => (typeof s === "object" ? [[n, s.metadata.labels]] : [])),
  );
  const wanted = [
    ...(r.spec.tokenSecretRef?.name ? [r.spec.tokenSecretRef.name] : []),
    ...(r.spec.source.target.credentialsSecretRef?.name
      ? [r.spec.source.target.credentialsSecretRef.name]
      : []),
  ];
  return restoreConfiguration(r, c, {
    auth: restoreAuth(r, c),
    tokenLabelsMissing: restoreTokenLabelsMissing(r, labels),
    secrets: new Map<string, Lookup>(wanted.map((n) => [n, read[n] ?? "missing"])),
  });
}
const pair = (x: { status: string; reason: string }) => [x.status, x.reason];

describe("RestoreConfigurationReady (upstream 0.5's contract)", () => {
  const creds = { provider: "s3", bucket: "b", credentialsSecretRef: { name: "s3" } };
  const cases: [string, OpenBaoRestore, OpenBaoCluster, Record<string, KubeObject>, string, string][] = [
    [
      "Hardened without egress rules",
      restore({ jwtAuthRole: "restore" }),
      cluster({ profile: "Hardened" }),
      {},
      "False",
      "NetworkEgressRulesRequired",
    ],
    ["no way to log in", restore(), cluster(), {}, "False", "AuthenticationRequired"],
    [
      "token Secret absent",
      restore({ tokenSecretRef: { name: "tok" } }),
      cluster(),
      {},
      "False",
      "TokenSecretMissing",
    ],
    [
      "the restore's own token Secret without a restore token's labels",
      restore({ tokenSecretRef: { name: "tok" } }),
      cluster(),
      { tok: secret("tok", { "openbao.org/cluster": "bao" }) },
      "False",
      "TokenSecretInvalid",
    ],
    [
      "store credentials absent",
      restore({ tokenSecretRef: { name: "tok" } }, creds),
      cluster(),
      { tok: secret("tok", LABELLED) },
      "False",
      "CredentialsSecretMissing",
    ],
    [
      "credentials Secret present",
      restore({ tokenSecretRef: { name: "tok" } }, creds),
      cluster(),
      { tok: secret("tok", LABELLED), s3: secret("s3") },
      "True",
      "Ready",
    ],
    [
      "roleArn",
      restore({ jwtAuthRole: "restore" }, { provider: "s3", bucket: "b", roleArn: "arn:aws:iam::1:role/x" }),
      cluster(),
      {},
      "True",
      "WorkloadIdentityConfigured",
    ],
    [
      "selfInit.oidc's restore role, ambient store identity",
      restore(),
      cluster({ selfInit: { enabled: true, oidc: { enabled: true } } }),
      {},
      "True",
      "AmbientIdentityAssumed",
    ],
    [
      "the cluster's backup token Secret: its labels are not a restore token's business",
      restore({}, creds),
      cluster({ backup: { tokenSecretRef: { name: "btok" } } }),
      { s3: secret("s3") },
      "False",
      "TokenSecretMissing",
    ],
  ];
  for (const [name, r, c, read, status, reason] of cases)
    it(`${name}: ${status}/${reason}`, () => {
      const got = evaluate(r, c, read);
      assert.deepEqual(pair(got), [status, reason], got.message);
      assert.equal(RESTORE_CONFIGURATION_CONTRACT.get(got.reason as never), status);
    });

  it("says how the Job logs in and reaches the store, naming no secret value", () => {
    const got = evaluate(restore({ tokenSecretRef: { name: "tok" } }, creds), cluster(), {
      tok: { ...secret("tok", LABELLED), data: { token: "czNjcjN0" } } as KubeObject,
      s3: secret("s3"),
    });
    assert.match(got.message, /token in Secret vault\/tok; the store credentials are in Secret s3/);
    assert.ok(!got.message.includes("czNjcjN0"));
    const jwt = evaluate(restore({ jwtAuthRole: "restore" }), cluster(), {});
    assert.match(jwt.message, /JWT role restore as ServiceAccount bao-restore-serviceaccount/);
  });

  it("a Secret it may not read is Unknown, not a guess", () => {
    const got = evaluate(restore({ tokenSecretRef: { name: "tok" } }), cluster(), {
      tok: "forbidden",
    } as never);
    assert.deepEqual(pair(got), ["Unknown", "Unknown"]);
    assert.match(got.message, /cannot read token Secret vault\/tok/);
  });

  it("a result outside the contract becomes Unknown/Unknown naming what was refused", () => {
    const got = withinRestoreContract({
      status: "True",
      reason: OpenBaoRestoreReason.TokenSecretMissing,
      message: "x",
    });
    assert.deepEqual(pair(got), ["Unknown", "Unknown"]);
    assert.match(got.message, /True\/TokenSecretMissing/);
  });

  it("has upstream's reasons, each from the restore's table", () => {
    assert.deepEqual([...RESTORE_CONFIGURATION_CONTRACT.keys()].sort(), [
      "AmbientIdentityAssumed",
      "AuthenticationRequired",
      "CredentialsSecretMissing",
      "NetworkEgressRulesRequired",
      "Ready",
      "TokenSecretInvalid",
      "TokenSecretMissing",
      "Unknown",
      "WorkloadIdentityConfigured",
    ]);
    for (const reason of RESTORE_CONFIGURATION_CONTRACT.keys())
      assert.equal((OpenBaoRestoreReason as Record<string, string>)[reason], reason);
  });
});
