import assert from "node:assert/strict";
import { createPublicKey, type JsonWebKey } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { upgradeToken } from "../../src/targets/openbao/adminops/upgrade/core/token.js";
import { BaoClient } from "../../src/targets/openbao/baoclient/client.js";
import { fromEnv, toEnvAndMounts } from "../../src/targets/openbao/executor/contract.js";
import { connection, login } from "../../src/targets/openbao/executor/openbao.js";
import { type DevOpenBao, startDevOpenBao } from "../../src/testenv/baodev.js";
import { baoCall } from "../../src/testenv/baohttp.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { projectedToken } from "../support/whoami.js";

// Where the executor and the upgrade controller log in with JWT: upstream's `auth/jwt-operator` (its
// restore page: role `restore` there), and, for setups made for this operator before, `auth/jwt`.
// A real OpenBao whose JWT auth trusts the real API server's ServiceAccount keys, and real projected
// tokens from TokenRequest, as in a cluster.

const clock = () => new Date();

describe("openbao JWT logins at upstream's auth/jwt-operator, and at auth/jwt as before", () => {
  let client: KubeClient;
  let ns: string;
  let bao: DevOpenBao;
  let dir: string;
  const root = (method: string, path: string, body?: unknown) =>
    baoCall(bao.addr, bao.rootToken, method, path, body);
  /** A projected token of `sa`, as the Job's volume holds it, written where the executor reads it. */
  const jwtFile = async (sa: string): Promise<string> => {
    const token = await projectedToken(client, ns, sa, "openbao-internal");
    const file = join(dir, sa);
    await writeFile(file, token);
    return file;
  };
  /** The auth a Job's executor reads back from its environment (what the builder writes). */
  const executorAuth = (role: string) =>
    fromEnv(
      Object.fromEntries(
        toEnvAndMounts({
          operation: "restore",
          openbao: { address: bao.addr },
          auth: { method: "jwt", role, audience: "openbao-internal" },
          store: { provider: "s3", bucket: "b", key: "k" },
        }).env.map((e) => [e.name, e.value]),
      ),
    ).auth;
  const mountJwt = async (mount: string, pems: string[]) => {
    await root("POST", `sys/auth/${mount}`, { type: "jwt" });
    await root("POST", `auth/${mount}/config`, {
      jwt_validation_pubkeys: pems,
      bound_issuer: sharedEnv().issuer,
    });
  };
  const role = (mount: string, name: string, sa: string, policy: string, audience = "openbao-internal") =>
    root("POST", `auth/${mount}/role/${name}`, {
      role_type: "jwt",
      bound_audiences: [audience],
      user_claim: "sub",
      bound_subject: `system:serviceaccount:${ns}:${sa}`,
      token_policies: [policy],
      token_ttl: "10m",
    });
  const policiesOf = async (token: string) =>
    ((await baoCall(bao.addr, token, "GET", "auth/token/lookup-self")) as { data: { policies: string[] } })
      .data.policies;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "objwtm");
    dir = await mkdtemp(join(tmpdir(), "jwt-mounts-"));
    bao = await startDevOpenBao();
    const jwks = JSON.parse(
      await client.requestText({
        method: "GET",
        path: "/openid/v1/jwks",
        accept: "application/jwk-set+json",
      }),
    ) as { keys: JsonWebKey[] };
    const pems = jwks.keys.map(
      (k) => createPublicKey({ key: k, format: "jwk" }).export({ type: "spki", format: "pem" }) as string,
    );
    for (const [name, path] of [
      ["restore-test", "sys/storage/raft/snapshot"],
      ["legacy-test", "sys/health"],
      ["upgrade-test", "sys/step-down"],
    ])
      await root("PUT", `sys/policies/acl/${name}`, {
        policy: `path "${path}" { capabilities = ["update"] }`,
      });
    // Upstream's restore page: JWT auth at auth/jwt-operator, role restore for the restore Job's account.
    await mountJwt("jwt-operator", pems);
    await role("jwt-operator", "restore", "bao-restore-serviceaccount", "restore-test");
    await role("jwt-operator", "upgrade", "bao-upgrade-serviceaccount", "upgrade-test");
    // A setup made for this operator before: its own role at auth/jwt.
    await mountJwt("jwt", pems);
    await role("jwt", "legacy-backup", "bao-backup-serviceaccount", "legacy-test");
  });
  after(async () => {
    await bao?.stop();
    await rm(dir, { recursive: true, force: true });
    await client.delete(NAMESPACE, ns).catch(() => {});
  });

  it("a restore Job's executor logs in at auth/jwt-operator with role restore", async () => {
    const auth = executorAuth("restore");
    assert.equal(auth.method === "jwt" && auth.mountPath, undefined, "no mount pinned: upstream's first");
    const token = await login(await connection(bao.addr), auth, {
      jwtFile: await jwtFile("bao-restore-serviceaccount"),
    });
    assert.ok((await policiesOf(token)).includes("restore-test"));
  });

  it("a role that exists only at auth/jwt (this operator's earlier mount) still logs in", async () => {
    const token = await login(await connection(bao.addr), executorAuth("legacy-backup"), {
      jwtFile: await jwtFile("bao-backup-serviceaccount"),
    });
    assert.ok((await policiesOf(token)).includes("legacy-test"));
  });

  it("a role neither mount accepts names both answers and no token", async () => {
    const file = await jwtFile("bao-restore-serviceaccount");
    await assert.rejects(
      login(await connection(bao.addr), executorAuth("nope"), { jwtFile: file }),
      (e: Error) => {
        assert.match(
          e.message,
          /^jwt login with role "nope" at auth\/jwt-operator: HTTP 400.*; at auth\/jwt: HTTP 400/,
        );
        assert.doesNotMatch(e.message, /eyJ/);
        return true;
      },
    );
    // A mount set explicitly is the only one tried.
    const pinned = { ...executorAuth("legacy-backup"), mountPath: "jwt-operator" } as const;
    await assert.rejects(
      login(await connection(bao.addr), pinned, { jwtFile: await jwtFile("bao-backup-serviceaccount") }),
      (e: Error) => /at auth\/jwt-operator: HTTP 400/.test(e.message) && !/auth\/jwt:/.test(e.message),
    );
  });

  it("the upgrade controller's spec.upgrade.jwtAuthRole logs in at auth/jwt-operator too", async () => {
    const c = await createOpenBaoCluster(client, ns, "bao", {
      replicas: 1,
      tls: { enabled: false },
      upgrade: { jwtAuthRole: "upgrade" },
    });
    const token = await upgradeToken(
      client,
      {
        clusterDomain: "cluster.local",
        baoClient: () => new BaoClient({ address: bao.addr, timeoutMs: 5_000 }),
      },
      c,
      clock,
    );
    assert.ok(token);
    assert.ok((await policiesOf(token!)).includes("upgrade-test"));
  });

  it("the upgrade's login asks for the target's openBaoAudience (serviceAccountToken.openBaoAudience)", async () => {
    await role("jwt-operator", "upgrade-corp", "corp-upgrade-serviceaccount", "upgrade-test", "corp-bao");
    const c = await createOpenBaoCluster(client, ns, "corp", {
      replicas: 1,
      tls: { enabled: false },
      upgrade: { jwtAuthRole: "upgrade-corp" },
    });
    const access = (jwtAudience?: string) => ({
      clusterDomain: "cluster.local",
      baoClient: () => new BaoClient({ address: bao.addr, timeoutMs: 5_000 }),
      ...(jwtAudience ? { jwtAudience } : {}),
    });
    // The default audience is not the one the role is bound to: OpenBao refuses the login.
    await assert.rejects(upgradeToken(client, access(), c, clock), /upgrade-corp/);
    const token = await upgradeToken(client, access("corp-bao"), c, clock);
    assert.ok((await policiesOf(token!)).includes("upgrade-test"));
  });

  it("with no auth/jwt-operator mount at all (OpenBao answers 403), auth/jwt still logs in", async () => {
    await root("DELETE", "sys/auth/jwt-operator");
    const token = await login(await connection(bao.addr), executorAuth("legacy-backup"), {
      jwtFile: await jwtFile("bao-backup-serviceaccount"),
    });
    assert.ok((await policiesOf(token)).includes("legacy-test"));
  });
});
