import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../src/apis/openbaorestore.js";
import { checkPrerequisites } from "../../src/targets/openbao/adminops/backup/prerequisites.js";
import { withBootstrapRole } from "../../src/targets/openbao/oidc-roles.js";
import { restoreAuth } from "../../src/targets/openbao/restore/validate.js";
import { operatorSubject, publicKeysPem } from "../../src/targets/openbao/steps/oidc-facts.js";
import { unsupportedFields } from "../../src/targets/openbao/unsupported.js";
import { checkClusterSpec } from "../../src/targets/openbao/validate/cluster.js";
import { renderSelfInitRequests } from "../../src/targets/openbao/workload/config/index.js";
import type { OidcBootstrapFacts } from "../../src/targets/openbao/workload/config/oidc-bootstrap.js";
import { type Entry, find, one, parseHcl, plain } from "../fixtures/openbao/golden/hcl-reader.js";

// biome-ignore lint/suspicious/noExplicitAny: tests spell out spec fields freely
function cluster(spec: Record<string, any> = {}): OpenBaoCluster {
  return {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "bao", namespace: "ns1", uid: "u1" },
    spec: {
      version: "2.5.0",
      storage: { size: "1Gi" },
      selfInit: { enabled: true, oidc: { enabled: true }, requests: [] },
      ...spec,
    },
  } as unknown as OpenBaoCluster;
}

const FACTS: OidcBootstrapFacts = {
  issuer: "https://kubernetes.default.svc.cluster.local",
  publicKeysPem: ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"],
  operatorSubject: "system:serviceaccount:platform-operator-system:platform-operator",
};

const BACKUP = {
  schedule: "0 3 * * *",
  target: { provider: "s3", bucket: "b", endpoint: "http://s3", credentialsSecretRef: { name: "c" } },
};

/** The bootstrap's requests as {label → {path, data}}. */
function bootstrap(c: OpenBaoCluster, facts: OidcBootstrapFacts = FACTS) {
  const doc = parseHcl(renderSelfInitRequests(c, facts));
  // The bootstrap comes first: OpenBao runs initialize blocks in file order.
  assert.deepEqual(
    find(doc, "initialize").map((e) => e.labels[0]),
    ["operator-bootstrap", "operator"],
  );
  const reqs = one(doc, "initialize", "operator-bootstrap").value as Entry[];
  return new Map(
    reqs.map((r) => {
      const v = plain(r.value) as { path: string; operation: string; data: Record<string, unknown> };
      assert.equal(v.operation, "update");
      return [r.labels[0]!, v] as const;
    }),
  );
}

const policyLines = (text: unknown) => String(text).split("\n");

describe("selfInit.oidc: the JWT bootstrap at auth/jwt-operator", () => {
  it("enables and configures auth/jwt-operator with the API server's issuer and keys", () => {
    const b = bootstrap(cluster());
    assert.equal(b.get("enable-jwt-auth")?.path, "sys/auth/jwt-operator");
    assert.equal(b.get("enable-jwt-auth")?.data["type"], "jwt");
    assert.equal(b.get("config-jwt-auth")?.path, "auth/jwt-operator/config");
    assert.deepEqual(b.get("config-jwt-auth")?.data, {
      bound_issuer: FACTS.issuer,
      jwt_validation_pubkeys: FACTS.publicKeysPem,
    });
    // spec.selfInit.oidc.issuer: when OpenBao sees the API server under another name.
    const named = bootstrap(
      cluster({ selfInit: { enabled: true, oidc: { enabled: true, issuer: "https://k8s.example" } } }),
    );
    assert.equal(named.get("config-jwt-auth")?.data["bound_issuer"], "https://k8s.example");
  });

  it("writes upstream's policies and roles for the operator, backup, upgrade and restore, in that order", () => {
    const b = bootstrap(cluster({ backup: BACKUP }));
    assert.deepEqual(
      [...b.keys()],
      [
        "enable-jwt-auth",
        "config-jwt-auth",
        "create-operator-policy",
        "create-operator-role",
        "create-backup-policy",
        "create-backup-jwt-role",
        "create-upgrade-policy",
        "create-upgrade-jwt-role",
        "create-restore-policy",
        "create-restore-jwt-role",
      ],
    );
    const paths = Object.fromEntries([...b].map(([k, v]) => [k, v.path]));
    assert.equal(paths["create-operator-policy"], "sys/policies/acl/openbao-operator");
    assert.equal(paths["create-operator-role"], "auth/jwt-operator/role/openbao-operator");
    assert.equal(paths["create-backup-policy"], "sys/policies/acl/openbao-operator-backup");
    assert.equal(paths["create-backup-jwt-role"], "auth/jwt-operator/role/openbao-operator-backup");
    assert.equal(paths["create-upgrade-policy"], "sys/policies/acl/openbao-operator-upgrade");
    assert.equal(paths["create-upgrade-jwt-role"], "auth/jwt-operator/role/openbao-operator-upgrade");
    assert.equal(paths["create-restore-policy"], "sys/policies/acl/openbao-operator-restore");
    assert.equal(paths["create-restore-jwt-role"], "auth/jwt-operator/role/openbao-operator-restore");

    // Restore may use both the seal-checked path and the forced one; nothing else.
    assert.deepEqual(policyLines(b.get("create-restore-policy")?.data["policy"]), [
      'path "sys/storage/raft/snapshot" { capabilities = ["update"] }',
      'path "sys/storage/raft/snapshot-force" { capabilities = ["update"] }',
    ]);
    assert.deepEqual(policyLines(b.get("create-backup-policy")?.data["policy"]), [
      'path "sys/storage/raft/snapshot" { capabilities = ["read"] }',
    ]);
    // Autopilot state is read by the operator (one voter at a time) and by upgrades.
    for (const p of ["create-operator-policy", "create-upgrade-policy"])
      assert.ok(
        policyLines(b.get(p)?.data["policy"]).includes(
          'path "sys/storage/raft/autopilot/state" { capabilities = ["read"] }',
        ),
        p,
      );

    const backupRole = b.get("create-backup-jwt-role")!.data;
    assert.equal(backupRole["bound_subject"], "system:serviceaccount:ns1:bao-backup-serviceaccount");
    assert.deepEqual(backupRole["bound_audiences"], ["openbao-internal"]);
    assert.deepEqual(backupRole["token_policies"], ["openbao-operator-backup"]);
    assert.equal(backupRole["token_no_default_policy"], true);
    assert.equal(backupRole["user_claim"], "sub");
    assert.equal(
      b.get("create-restore-jwt-role")!.data["bound_subject"],
      "system:serviceaccount:ns1:bao-restore-serviceaccount",
    );
    assert.equal(b.get("create-operator-role")!.data["bound_subject"], FACTS.operatorSubject);
  });

  it("binds every role to the target's openBaoAudience (the operator's unless the spec names one)", () => {
    const b = bootstrap(cluster({ backup: BACKUP }), { ...FACTS, audience: "corp-bao" });
    for (const role of [
      "create-operator-role",
      "create-backup-jwt-role",
      "create-upgrade-jwt-role",
      "create-restore-jwt-role",
    ])
      assert.deepEqual(b.get(role)?.data["bound_audiences"], ["corp-bao"], role);
    const own = bootstrap(
      cluster({
        backup: BACKUP,
        selfInit: { enabled: true, oidc: { enabled: true, audience: "ops" }, requests: [] },
      }),
      { ...FACTS, audience: "corp-bao" },
    );
    assert.deepEqual(own.get("create-operator-role")?.data["bound_audiences"], ["ops"]);
    assert.deepEqual(own.get("create-backup-jwt-role")?.data["bound_audiences"], ["corp-bao"]);
  });

  it("adds no backup role without spec.backup, and blue-green's Raft grants only for BlueGreen", () => {
    const plain1 = bootstrap(cluster());
    assert.ok(!plain1.has("create-backup-policy"));
    assert.ok(
      !policyLines(plain1.get("create-upgrade-policy")?.data["policy"]).some((l) => l.includes("promote")),
    );
    const bg = bootstrap(cluster({ upgrade: { strategy: "BlueGreen" } }));
    assert.ok(
      policyLines(bg.get("create-upgrade-policy")?.data["policy"]).includes(
        'path "sys/storage/raft/promote" { capabilities = ["update"] }',
      ),
    );
  });

  it("the operator's policy is upstream's exactly without read replicas, and adds demote with them", () => {
    const upstream = [
      'path "sys/health" { capabilities = ["read"] }',
      'path "sys/step-down" { capabilities = ["sudo", "update"] }',
      'path "sys/storage/raft/configuration" { capabilities = ["read"] }',
      'path "sys/storage/raft/remove-peer" { capabilities = ["update"] }',
      'path "sys/storage/raft/autopilot/configuration" { capabilities = ["read", "update"] }',
      'path "sys/storage/raft/autopilot/state" { capabilities = ["read"] }',
    ];
    const operatorPolicy = (spec: Record<string, unknown>) =>
      policyLines(bootstrap(cluster(spec)).get("create-operator-policy")?.data["policy"]);
    assert.deepEqual(operatorPolicy({}), upstream);
    assert.deepEqual(operatorPolicy({ readReplicas: { replicas: 0 } }), upstream);
    assert.deepEqual(operatorPolicy({ readReplicas: { replicas: 2 } }), [
      ...upstream,
      'path "sys/storage/raft/demote" { capabilities = ["update"] }',
    ]);
    // Only the operator's: the executors' policies do not change with read replicas.
    const withReplicas = bootstrap(cluster({ readReplicas: { replicas: 1 } }));
    const without = bootstrap(cluster());
    for (const p of ["create-upgrade-policy", "create-restore-policy"])
      assert.equal(withReplicas.get(p)?.data["policy"], without.get(p)?.data["policy"], p);
  });

  it("accepts additionalSubjects as an exact, sorted subject list; the spec's role names are kept", () => {
    const other = "system:serviceaccount:dr:bao-restore-serviceaccount";
    const b = bootstrap(
      cluster({
        restore: { jwtAuthRole: "my-restore" },
        selfInit: { enabled: true, oidc: { enabled: true, additionalSubjects: { restore: [other] } } },
      }),
    );
    const role = b.get("create-restore-jwt-role")!;
    assert.equal(role.path, "auth/jwt-operator/role/my-restore");
    assert.equal(role.data["bound_subject"], undefined);
    assert.deepEqual(role.data["bound_claims"], {
      sub: [other, "system:serviceaccount:ns1:bao-restore-serviceaccount"],
    });
  });

  it("without the operator's own ServiceAccount (not in a pod) writes its policy but no role", () => {
    const b = bootstrap(cluster(), { ...FACTS, operatorSubject: undefined });
    assert.ok(b.has("create-operator-policy"));
    assert.ok(!b.has("create-operator-role"));
  });

  it("renders the same text twice (a second pass or a restarted operator changes nothing)", () => {
    const c = cluster({ backup: BACKUP });
    assert.equal(renderSelfInitRequests(c, { ...FACTS }), renderSelfInitRequests(c, { ...FACTS }));
  });

  it("refuses to render without the issuer, and names bad subjects and role names", () => {
    assert.throws(
      () => renderSelfInitRequests(cluster()),
      /selfInit\.oidc: the API server's ServiceAccount issuer/,
    );
    assert.throws(
      () =>
        renderSelfInitRequests(
          cluster({
            selfInit: { enabled: true, oidc: { enabled: true, additionalSubjects: { backup: ["bob"] } } },
          }),
          FACTS,
        ),
      /selfInit\.oidc\.additionalSubjects\.backup\[0\]/,
    );
    assert.throws(
      () => renderSelfInitRequests(cluster({ restore: { jwtAuthRole: "../sys" } }), FACTS),
      /restore\.jwtAuthRole/,
    );
    const problems = checkClusterSpec("bao", {
      ...cluster().spec,
      selfInit: {
        enabled: true,
        oidc: { enabled: true, additionalSubjects: { upgrade: ["system:serviceaccount:Bad:x"] } },
        requests: [
          { name: "jwt", operation: "update", path: "sys/auth/jwt-operator", data: { type: "jwt" } },
        ],
      },
    } as unknown as OpenBaoCluster["spec"]);
    assert.deepEqual(
      problems.map((p) => p.field),
      ["spec.selfInit.oidc.additionalSubjects.upgrade[0]", "spec.selfInit.requests[0].path"],
    );
  });

  it("is no longer reported as unsupported", () => {
    assert.deepEqual(unsupportedFields(cluster().spec), []);
  });
});

describe("selfInit.oidc: the executors log in with the bootstrapped roles", () => {
  it("a backup without a login of its own uses role backup; a token Secret or a named role wins", () => {
    assert.deepEqual(withBootstrapRole(cluster(), "backup", {}), { jwtAuthRole: "openbao-operator-backup" });
    assert.deepEqual(withBootstrapRole(cluster(), "backup", { tokenSecretRef: { name: "t" } }), {
      tokenSecretRef: { name: "t" },
    });
    assert.deepEqual(withBootstrapRole(cluster(), "upgrade", { jwtAuthRole: "mine" }), {
      jwtAuthRole: "mine",
    });
    assert.equal(withBootstrapRole(cluster({ selfInit: { enabled: true } }), "backup", undefined), undefined);
  });

  it("a scheduled backup with neither a role nor a token is refused, never given the root token", () => {
    const facts = (c: OpenBaoCluster) => ({
      cluster: { ...c, status: { initialized: true } } as OpenBaoCluster,
      secretsPresent: new Set(["c", "bao-root-token"]),
      holder: "backup",
    });
    const refused = checkPrerequisites(facts(cluster({ selfInit: { enabled: true }, backup: BACKUP })));
    assert.equal(refused.ok, false);
    assert.equal(!refused.ok && refused.reason, "AuthenticationRequired");
    assert.deepEqual(checkPrerequisites(facts(cluster({ backup: BACKUP }))), { ok: true });
  });

  it("a restore without a login of its own uses upstream's role openbao-operator-restore", () => {
    const r = { spec: { cluster: "bao", source: {} } } as unknown as OpenBaoRestore;
    assert.deepEqual(restoreAuth(r, cluster({ backup: { ...BACKUP, jwtAuthRole: "b" } })), {
      method: "jwt",
      role: "openbao-operator-restore",
    });
    assert.equal(restoreAuth(r, cluster({ selfInit: { enabled: true } })), undefined);
  });
});

describe("selfInit.oidc: what is read from the API server", () => {
  it("turns the JWKS into sorted, distinct PEM keys and names a key that is not one", () => {
    const jwk = (type: "rsa" | "ec") =>
      (type === "rsa"
        ? generateKeyPairSync("rsa", { modulusLength: 2048 })
        : generateKeyPairSync("ec", { namedCurve: "P-256" })
      ).publicKey.export({ format: "jwk" });
    const a = jwk("rsa");
    const b = jwk("ec");
    const one1 = publicKeysPem([a, b, a]);
    assert.equal(one1.length, 2);
    assert.deepEqual(publicKeysPem([b, a]), one1);
    assert.match(one1[0]!, /^-----BEGIN PUBLIC KEY-----\n/);
    assert.throws(() => publicKeysPem([]), /holds no key/);
    assert.throws(() => publicKeysPem([{ kty: "nope" }]), /key 0 is not a public key/);
  });

  it("reads the operator's subject from its own token, and nothing outside a pod", () => {
    const dir = mkdtempSync(join(tmpdir(), "oidc-"));
    const file = join(dir, "token");
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    writeFileSync(file, `${part({ alg: "RS256" })}.${part({ sub: "system:serviceaccount:ops:op" })}.sig`);
    assert.deepEqual(operatorSubject(file), { operatorSubject: "system:serviceaccount:ops:op" });
    writeFileSync(file, "not-a-jwt");
    assert.deepEqual(operatorSubject(file), {});
    assert.deepEqual(operatorSubject(join(dir, "absent")), {});
  });
});
