import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP, SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { addProcess, assertEnvFromSecretsOnly, LeakSearch } from "../support/leak-search.js";
import { installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// No secret value outside a Secret, for the openbao target, on the real API server with the real
// operator process at debug level (no node: everything here is decided before a pod runs, which is
// where the seal credentials, the self-init requests and the references are written or not). Every
// secret input gets a distinct canary; the clusters go through creation, a credential change and
// refusals; then every place a value must never be is searched byte for byte.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const canary = (what: string): string => `canary-${what}-${randomBytes(6).toString("hex")}`;

describe("openbao target: no secret value outside a Secret", () => {
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "ob-leak");
    await installOpenBaoClusterCrd(client);
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
  });
  after(async () => {
    await op?.stop();
    client.close();
  });

  const c = {
    transit: canary("transit-token"),
    transit2: canary("transit-token-rotated"),
    awsAccess: canary("aws-access"),
    awsSecret: canary("aws-secret"),
    awsSession: canary("aws-session"),
    azure: canary("azure-secret"),
    pin: canary("hsm-pin"),
    pluginPin: canary("plugin-pin"),
    hardened: canary("hardened-token"),
    userpass: canary("userpass-password"),
    approle: canary("approle-secret-id"),
    storeKey: canary("store-access-key"),
    storeSecret: canary("store-secret-key"),
    backupToken: canary("backup-token"),
    upgradeToken: canary("upgrade-token"),
    refToken: canary("ref-transit-token"),
    pluginToken: canary("plugin-env-token"),
    pluginDsn: canary("plugin-env-dsn-password"),
  };

  const apply = (name: string, spec: Json) =>
    client.apply(
      OPENBAOCLUSTER,
      {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name, namespace: ns },
        spec: { version: "2.7.2", replicas: 3, storage: { size: "128Mi" }, ...spec },
      } as KubeObject,
      { fieldManager: "test-user", force: true },
    );
  const secret = (name: string, data: Record<string, string>) =>
    client.apply(
      SECRET,
      { apiVersion: "v1", kind: "Secret", metadata: { name, namespace: ns }, stringData: data } as KubeObject,
      { fieldManager: "test-user", force: true },
    );
  const condition = async (name: string, type: string): Promise<Json | undefined> =>
    ((await client.get(OPENBAOCLUSTER, name, ns)) as Json)["status"]?.conditions?.find(
      (x: Json) => x.type === type,
    );
  const secretData = async (name: string): Promise<Record<string, string>> =>
    Object.fromEntries(
      Object.entries(((await client.get(SECRET, name, ns)) as Json)["data"] ?? {}).map(([k, v]) => [
        k,
        Buffer.from(String(v), "base64").toString("utf8"),
      ]),
    );
  /** Waits for a Secret the operator writes for `cluster`; a timeout says what the cluster reports. */
  const written = async (name: string, cluster: string): Promise<Record<string, string>> => {
    try {
      await eventually(
        async () => ((await client.getOrUndefined(SECRET, name, ns)) ? true : undefined),
        120_000,
        `Secret ${name}`,
      );
    } catch (e) {
      const conditions = ((await client.get(OPENBAOCLUSTER, cluster, ns)) as Json)["status"]?.conditions;
      throw new Error(`${(e as Error).message}; ${cluster} reports ${JSON.stringify(conditions)}`);
    }
    return secretData(name);
  };
  const transit = (token: string) => ({
    type: "transit",
    transit: {
      address: "https://transit.example.test:8200",
      mountPath: "transit/",
      keyName: "unseal",
      token,
    },
  });

  it("plants a canary in every secret input, drives the clusters, and finds none where it must not be", async () => {
    await secret("store-creds", { accessKeyId: c.storeKey, secretAccessKey: c.storeSecret });
    await secret("backup-token", { token: c.backupToken });
    await secret("upgrade-token", { token: c.upgradeToken });
    await secret("transit-ref", { token: c.refToken });

    await apply("transit", {
      unseal: transit(c.transit),
      selfInit: {
        enabled: true,
        requests: [
          { name: "userpass", operation: "update", path: "sys/auth/userpass", data: { type: "userpass" } },
          {
            name: "admin",
            operation: "update",
            path: "auth/userpass/users/admin",
            data: { password: c.userpass, token_policies: "admin" },
          },
          {
            name: "approle_secret",
            operation: "update",
            path: "auth/approle/role/ci/custom-secret-id",
            data: { secret_id: c.approle },
          },
        ],
      },
      backup: {
        schedule: "0 3 * * *",
        tokenSecretRef: { name: "backup-token" },
        target: {
          provider: "s3",
          endpoint: "https://objects.example.test",
          bucket: "snapshots",
          credentialsSecretRef: { name: "store-creds" },
        },
      },
      upgrade: { strategy: "RollingUpdate" },
    });
    await apply("aws", {
      // Built into OpenBao before 2.7; from 2.7 this seal needs a kms plugin (validate/seal-plugins.ts).
      version: "2.6.2",
      unseal: {
        type: "awskms",
        awskms: {
          region: "eu-west-1",
          kmsKeyID: "alias/unseal",
          accessKey: c.awsAccess,
          secretKey: c.awsSecret,
          sessionToken: c.awsSession,
        },
      },
    });
    await apply("azure", {
      // Built into OpenBao before 2.7; from 2.7 this seal needs a kms plugin (validate/seal-plugins.ts).
      version: "2.6.2",
      unseal: {
        type: "azurekeyvault",
        azureKeyVault: { vaultName: "v", keyName: "k", tenantID: "t", clientID: "id", clientSecret: c.azure },
      },
    });
    await apply("hsm", {
      // Built into OpenBao before 2.7; from 2.7 this seal needs a kms plugin (validate/seal-plugins.ts).
      version: "2.6.2",
      unseal: {
        type: "pkcs11",
        pkcs11: { lib: "/usr/lib/softhsm.so", keyLabel: "k", slot: "0", pin: c.pin },
      },
    });
    await apply("plugin", {
      plugins: [
        {
          type: "kms",
          name: "pkcs11",
          version: "v0.2.0",
          binaryName: "openbao-plugin-kms-pkcs11",
          image: "ghcr.io/openbao/openbao-plugin-kms-pkcs11:v0.2.0",
          sha256sum: "a".repeat(64),
        },
      ],
      unseal: { type: "kms", kms: { name: "pkcs11", lib: "softhsm", key_label: "k", pin: c.pluginPin } },
    });
    await apply("byref", {
      unseal: {
        type: "transit",
        transit: { address: "https://transit.example.test:8200", mountPath: "transit/", keyName: "unseal" },
        credentialsSecretRef: { name: "transit-ref" },
      },
    });
    // A plugin's environment: OpenBao reads it only from config.hcl, which therefore is a Secret.
    await apply("pluginenv", {
      plugins: [
        {
          type: "secret",
          name: "example",
          version: "v1.0.0",
          binaryName: "openbao-plugin-example",
          image: "ghcr.io/example/openbao-plugin-example:v1.0.0",
          sha256sum: "b".repeat(64),
          env: [`API_TOKEN=${c.pluginToken}`, `DATABASE_URL=postgres://app:${c.pluginDsn}@db:5432/app`],
        },
      ],
    });
    // Refused: the Hardened profile takes no inline credential.
    await apply("hardened", { profile: "Hardened", unseal: transit(c.hardened) });
    // The operator-managed static seal: its generated key is a canary too.
    await apply("static", {});

    for (const name of ["transit", "aws", "azure", "hsm", "plugin"]) {
      const risk = await eventually(
        async () => {
          const x = await condition(name, "SecurityRisk");
          return x?.status === "True" ? x : undefined;
        },
        120_000,
        `SecurityRisk on ${name}`,
      );
      assert.equal(risk["reason"], "InlineCredentials");
      assert.match(risk["message"], /spec\.unseal\./);
    }
    assert.equal(await condition("byref", "SecurityRisk"), undefined, "a referenced Secret is no risk");
    const pluginRisk = await eventually(
      async () => {
        const x = await condition("pluginenv", "SecurityRisk");
        return x?.status === "True" ? x : undefined;
      },
      120_000,
      "SecurityRisk on pluginenv",
    );
    // Named by its field; the DSN's variable says nothing secret, so only the token is named.
    assert.match(pluginRisk["message"], /spec\.plugins\[0\]\.env\[0\]/);
    assert.doesNotMatch(pluginRisk["message"], /env\[1\]/);
    const refused = await eventually(
      async () => {
        const x = await condition("hardened", "Degraded");
        return x?.status === "True" ? x : undefined;
      },
      120_000,
      "the Hardened cluster refused",
    );
    assert.equal(refused["reason"], "InvalidSpec");
    assert.match(refused["message"], /spec\.unseal\.transit\.token: .*Hardened profile refuses/);

    // The values went where the pods read them, and only there.
    assert.deepEqual(await written("transit-seal-credentials", "transit"), { VAULT_TOKEN: c.transit });
    assert.deepEqual(await secretData("aws-seal-credentials"), {
      AWS_ACCESS_KEY_ID: c.awsAccess,
      AWS_SECRET_ACCESS_KEY: c.awsSecret,
      AWS_SESSION_TOKEN: c.awsSession,
    });
    assert.ok((await written("transit-self-init", "transit"))["self-init.hcl"]?.includes(c.userpass));
    assert.ok((await written("plugin-config", "plugin"))["config.hcl"]?.includes(c.pluginPin));
    const pluginEnvConfig = (await written("pluginenv-config", "pluginenv"))["config.hcl"] ?? "";
    assert.ok(pluginEnvConfig.includes(c.pluginToken) && pluginEnvConfig.includes(c.pluginDsn));
    await written("static-unseal-key", "static");
    // As stored (base64): the form a leak of the object would carry.
    const staticKey = String(((await client.get(SECRET, "static-unseal-key", ns)) as Json)["data"].key);
    assert.ok(staticKey.length >= 40);

    // A changed credential: the Secret follows, the pods would roll (their template's hash moves).
    const hashOf = async () =>
      (
        (await client.get(
          { group: "apps", version: "v1", kind: "StatefulSet", plural: "statefulsets", namespaced: true },
          "transit",
          ns,
        )) as Json
      )["spec"].template.metadata.annotations["openbao.org/config-hash"];
    const before = await eventually(hashOf, 120_000, "the transit StatefulSet");
    await apply("transit", {
      unseal: transit(c.transit2),
      selfInit: ((await client.get(OPENBAOCLUSTER, "transit", ns)) as Json)["spec"].selfInit,
      backup: ((await client.get(OPENBAOCLUSTER, "transit", ns)) as Json)["spec"].backup,
      upgrade: ((await client.get(OPENBAOCLUSTER, "transit", ns)) as Json)["spec"].upgrade,
    });
    await eventually(
      async () =>
        (await secretData("transit-seal-credentials"))["VAULT_TOKEN"] === c.transit2 ? true : undefined,
      120_000,
      "the rotated token in the Secret",
    );
    await eventually(
      async () => ((await hashOf()) !== before ? true : undefined),
      120_000,
      "a new config hash",
    );
    // Dropping the inline credentials removes the operator's copy.
    await apply("azure", {
      version: "2.6.2",
      unseal: {
        type: "azurekeyvault",
        azureKeyVault: { vaultName: "v", keyName: "k", tenantID: "t", clientID: "id" },
      },
    });
    await eventually(
      async () => ((await client.getOrUndefined(SECRET, "azure-seal-credentials", ns)) ? undefined : true),
      120_000,
      "the azure credentials Secret removed",
    );
    // A plugin without environment: config.hcl moves back to a ConfigMap, the Secret copy goes.
    const pluginSpec = ((await client.get(OPENBAOCLUSTER, "pluginenv", ns)) as Json)["spec"].plugins;
    await apply("pluginenv", { plugins: pluginSpec.map(({ env: _env, ...p }: Json) => p) });
    await eventually(
      async () =>
        (await client.getOrUndefined(CONFIGMAP, "pluginenv-config", ns)) &&
        !(await client.getOrUndefined(SECRET, "pluginenv-config", ns))
          ? true
          : undefined,
      120_000,
      "pluginenv's config.hcl back in a ConfigMap, its Secret removed",
    );

    // Several more passes, so resyncs add their logs and events to the sample.
    await eventually(
      async () => {
        const passes = (op!.output().match(/"msg":"reconciled"/g) ?? []).length;
        return passes >= 40 ? true : undefined;
      },
      180_000,
      "forty finished passes",
    );

    const search = new LeakSearch();
    const pods = await search.addNamespace(client, ns, [OPENBAOCLUSTER]);
    addProcess(search, op!.output(), await op!.metrics());
    assert.ok(search.text("operator log").includes('"level":"debug"'), "the log is at debug level");
    assert.ok(pods.length >= 6, `workloads searched: ${pods.length}`);
    const envChecked = assertEnvFromSecretsOnly(pods, Object.values(c));
    assert.ok(envChecked > 0);
    // Every config file written as a ConfigMap is in the sample, and the seal's env is by reference.
    assert.ok(search.text("ConfigMap/transit-config data").includes('seal \\"transit\\"'));
    assert.ok(search.text("StatefulSet/transit spec").includes('"VAULT_TOKEN"'));
    const canaries = [...Object.values(c), staticKey];
    const report = search.assertNone(canaries, "openbao");
    assert.ok(report.bytes > 10_000, `searched ${report.bytes} bytes`);
  });
});
