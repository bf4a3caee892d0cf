import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { nextStatus } from "../../src/targets/openbao/status.js";
import { checkClusterSpec } from "../../src/targets/openbao/validate/cluster.js";
import { renderConfig } from "../../src/targets/openbao/workload/config/index.js";
import { inlineSealSecrets } from "../../src/targets/openbao/workload/config/seal.js";
import {
  buildConfigObject,
  buildSelfInitSecret,
  buildStatefulSet,
} from "../../src/targets/openbao/workload/statefulsets/build.js";
import { buildSealCredentialsSecret } from "../../src/targets/openbao/workload/statefulsets/seal-wiring.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON fixtures
type Json = any;

function cluster(spec: Record<string, unknown>): OpenBaoCluster {
  return {
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns1", uid: "u1", generation: 1 },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, ...spec },
  } as unknown as OpenBaoCluster;
}

const runtime = { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] };
const podOf = (c: OpenBaoCluster): Json =>
  (
    buildStatefulSet(c, {
      component: "server",
      replicas: 3,
      configHash: "h",
      clusterDomain: "cluster.local",
      runtime,
    }) as Json
  ).spec.template.spec;
const envOf = (c: OpenBaoCluster): Json[] => podOf(c).containers[0].env;
const decode = (s: Json): Record<string, string> =>
  Object.fromEntries(
    Object.entries(s.data as Record<string, string>).map(([k, v]) => [
      k,
      Buffer.from(v, "base64").toString(),
    ]),
  );

/** Every inline credential type, with a distinct canary for each value. */
const CASES: { name: string; unseal: Record<string, unknown>; env: Record<string, string> }[] = [
  {
    name: "transit token",
    unseal: {
      type: "transit",
      transit: {
        address: "https://t:8200",
        mountPath: "transit/",
        keyName: "k",
        token: "canary-transit-tok",
      },
    },
    env: { VAULT_TOKEN: "canary-transit-tok" },
  },
  {
    name: "awskms keys",
    unseal: {
      type: "awskms",
      awskms: {
        region: "eu-west-1",
        kmsKeyID: "alias/k",
        accessKey: "canary-aws-access",
        secretKey: "canary-aws-secret",
        sessionToken: "canary-aws-session",
      },
    },
    env: {
      AWS_ACCESS_KEY_ID: "canary-aws-access",
      AWS_SECRET_ACCESS_KEY: "canary-aws-secret",
      AWS_SESSION_TOKEN: "canary-aws-session",
    },
  },
  {
    name: "azure client secret",
    unseal: {
      type: "azurekeyvault",
      azureKeyVault: {
        vaultName: "v",
        keyName: "k",
        tenantID: "t",
        clientID: "c",
        clientSecret: "canary-azure",
      },
    },
    env: { AZURE_CLIENT_SECRET: "canary-azure" },
  },
  {
    name: "pkcs11 pin",
    unseal: {
      type: "pkcs11",
      pkcs11: { lib: "/usr/lib/p11.so", keyLabel: "k", slot: "0", pin: "canary-pin" },
    },
    env: { BAO_HSM_PIN: "canary-pin" },
  },
];

describe("seal credentials reach the pods from Secrets only", () => {
  for (const t of CASES) {
    it(`${t.name}: left out of config.hcl, kept in the operator's Secret, read by secretKeyRef`, () => {
      const c = cluster({ unseal: t.unseal });
      const text = renderConfig(c);
      const config = JSON.stringify(buildConfigObject(c, text));
      const pod = JSON.stringify(podOf(c));
      for (const v of Object.values(t.env)) {
        assert.ok(!text.includes(v), `${v} in config.hcl`);
        assert.ok(!config.includes(v), `${v} in the config object`);
        assert.ok(!pod.includes(v), `${v} in the pod spec`);
      }
      assert.equal((buildConfigObject(c, text) as Json).kind, "ConfigMap", "no credential left in the file");
      const secret = buildSealCredentialsSecret(c) as Json;
      assert.equal(secret.kind, "Secret");
      assert.equal(secret.metadata.name, "demo-seal-credentials");
      assert.deepEqual(decode(secret), t.env);
      const env = envOf(c);
      for (const name of Object.keys(t.env))
        assert.deepEqual(
          env.find((e) => e.name === name),
          { name, valueFrom: { secretKeyRef: { name: "demo-seal-credentials", key: name } } },
        );
      assert.equal(inlineSealSecrets(c.spec as never).length, Object.keys(t.env).length);
    });
  }

  it("no env var of any case carries a literal value that is a credential", () => {
    for (const t of CASES) {
      const canaries = Object.values(t.env);
      for (const e of envOf(cluster({ unseal: t.unseal })))
        if (e.value !== undefined) assert.ok(!canaries.includes(e.value), `${e.name} carries a credential`);
    }
  });

  it("a cluster without inline credentials writes no credentials Secret", () => {
    assert.equal(buildSealCredentialsSecret(cluster({})), undefined);
    assert.equal(
      buildSealCredentialsSecret(
        cluster({
          unseal: { type: "transit", transit: { address: "https://t", mountPath: "transit/", keyName: "k" } },
        }),
      ),
      undefined,
    );
  });

  it("credentialsSecretRef: the Secret is mounted at upstream's path and its keys offered as optional variables", () => {
    const c = cluster({
      unseal: {
        type: "awskms",
        awskms: { region: "r", kmsKeyID: "k", secretKey: "canary-inline-wins" },
        credentialsSecretRef: { name: "aws-creds" },
      },
    });
    const pod = podOf(c);
    assert.deepEqual(
      pod.volumes.find((v: Json) => v.name === "seal-creds"),
      { name: "seal-creds", secret: { secretName: "aws-creds", defaultMode: 0o440 } },
    );
    assert.ok(pod.containers[0].volumeMounts.some((m: Json) => m.mountPath === "/etc/bao/seal-creds"));
    const env = pod.containers[0].env as Json[];
    assert.deepEqual(env.find((e) => e.name === "AWS_ACCESS_KEY_ID").valueFrom.secretKeyRef, {
      name: "aws-creds",
      key: "AWS_ACCESS_KEY_ID",
      optional: true,
    });
    // The inline value wins over the referenced Secret's key of the same variable, and is named once.
    const secretKey = env.filter((e) => e.name === "AWS_SECRET_ACCESS_KEY");
    assert.equal(secretKey.length, 1);
    assert.equal(secretKey[0].valueFrom.secretKeyRef.name, "demo-seal-credentials");
    const transit = envOf(
      cluster({
        unseal: {
          type: "transit",
          transit: { address: "https://t", mountPath: "m", keyName: "k" },
          credentialsSecretRef: { name: "tok" },
        },
      }),
    );
    assert.deepEqual(transit.find((e) => e.name === "VAULT_TOKEN").valueFrom.secretKeyRef, {
      name: "tok",
      key: "token",
      optional: true,
    });
    const gcp = envOf(
      cluster({
        unseal: {
          type: "gcpckms",
          gcpCloudKMS: { project: "p", region: "r", keyRing: "k", cryptoKey: "c" },
          credentialsSecretRef: { name: "g" },
        },
      }),
    );
    assert.equal(
      gcp.find((e) => e.name === "GOOGLE_APPLICATION_CREDENTIALS").value,
      "/etc/bao/seal-creds/credentials.json",
    );
  });

  it("pkcs11.runtime: LD_LIBRARY_PATH, env keys by secretKeyRef, fileEnv keys mounted alone and named by path", () => {
    // Upstream's documented PKCS#11 example (configure/unseal), unchanged.
    const pkcs11 = {
      lib: "/usr/local/lib/libpkcs11.so",
      tokenLabel: "OpenBao",
      keyLabel: "bao-root-key-aes",
      mechanism: "AES_GCM",
      runtime: {
        libraryPath: "/usr/local/lib",
        env: [{ name: "CRYPTOSERVER", secretKey: "cryptoserver" }],
        fileEnv: [{ name: "CS_PKCS11_R3_CFG", secretKey: "cs_pkcs11_R3.cfg" }],
      },
    };
    const c = cluster({
      unseal: { type: "pkcs11", credentialsSecretRef: { name: "pkcs11-runtime" }, pkcs11 },
    });
    const text = renderConfig(c);
    assert.match(text, /seal "pkcs11" \{/);
    assert.doesNotMatch(
      text,
      /runtime|CRYPTOSERVER|cs_pkcs11|libraryPath/,
      "pod wiring stays out of config.hcl",
    );
    const pod = podOf(c);
    const env = pod.containers[0].env as Json[];
    const byName = (n: string) => env.find((e) => e.name === n);
    assert.equal(byName("LD_LIBRARY_PATH").value, "/usr/local/lib");
    assert.deepEqual(byName("CRYPTOSERVER").valueFrom.secretKeyRef, {
      name: "pkcs11-runtime",
      key: "cryptoserver",
    });
    assert.equal(byName("CS_PKCS11_R3_CFG").value, "/etc/bao/seal-creds/cs_pkcs11_R3.cfg");
    // The PIN comes from the Secret's BAO_HSM_PIN key, as a variable.
    assert.deepEqual(byName("BAO_HSM_PIN").valueFrom.secretKeyRef, {
      name: "pkcs11-runtime",
      key: "BAO_HSM_PIN",
      optional: true,
    });
    // Only the fileEnv key is a file; the PIN and the env keys never reach the filesystem.
    assert.deepEqual(
      pod.volumes.find((v: Json) => v.name === "seal-creds"),
      {
        name: "seal-creds",
        secret: {
          secretName: "pkcs11-runtime",
          defaultMode: 0o440,
          items: [{ key: "cs_pkcs11_R3.cfg", path: "cs_pkcs11_R3.cfg" }],
        },
      },
    );
    // Without fileEnv nothing is mounted.
    const noFiles = podOf(
      cluster({
        unseal: {
          type: "pkcs11",
          credentialsSecretRef: { name: "pkcs11-runtime" },
          pkcs11: { ...pkcs11, runtime: { env: pkcs11.runtime.env } },
        },
      }),
    );
    assert.equal(
      noFiles.volumes.find((v: Json) => v.name === "seal-creds"),
      undefined,
    );
  });

  it("pkcs11.runtime refusals name the entry: reserved or repeated names, keys without a Secret", () => {
    const withRuntime = (runtime: unknown, ref: unknown = { name: "p" }) =>
      cluster({
        unseal: { type: "pkcs11", credentialsSecretRef: ref, pkcs11: { lib: "/l.so", slot: "0", runtime } },
      });
    assert.throws(
      () => renderConfig(withRuntime({ env: [{ name: "BAO_HSM_PIN", secretKey: "pin" }] })),
      /unseal\.pkcs11\.runtime\.env\[0\]\.name: BAO_HSM_PIN is set by the operator/,
    );
    assert.throws(
      () =>
        renderConfig(
          withRuntime({ env: [{ name: "A", secretKey: "a" }], fileEnv: [{ name: "A", secretKey: "b" }] }),
        ),
      /unseal\.pkcs11\.runtime\.fileEnv\[0\]\.name: A is already mapped by unseal\.pkcs11\.runtime\.env\[0\]/,
    );
    assert.throws(
      () => renderConfig(withRuntime({ fileEnv: [{ name: "A", secretKey: "a" }] }, { name: "" })),
      /unseal\.credentialsSecretRef: is required by unseal\.pkcs11\.runtime/,
    );
    assert.throws(
      () => renderConfig(withRuntime({ libraryPath: "lib" })),
      /unseal\.pkcs11\.runtime\.libraryPath: must be an absolute path/,
    );
    // libraryPath alone needs no Secret.
    assert.equal(
      envOf(withRuntime({ libraryPath: "/opt/hsm" }, { name: "" })).find(
        (e: Json) => e.name === "LD_LIBRARY_PATH",
      ).value,
      "/opt/hsm",
    );
  });

  it("a KMS plugin's credential stays in the file, so the file is a Secret and the pods mount it as one", () => {
    const c = cluster({
      plugins: [
        {
          type: "kms",
          name: "pkcs11",
          image: "ghcr.io/openbao/openbao-plugin-kms-pkcs11:v0.2.0",
          version: "v0.2.0",
          binaryName: "openbao-plugin-kms-pkcs11",
          sha256sum: "a".repeat(64),
        },
      ],
      unseal: {
        type: "kms",
        kms: { name: "pkcs11", lib: "softhsm", pin: "canary-plugin-pin", key_label: "k" },
      },
    });
    const text = renderConfig(c);
    assert.ok(text.includes("canary-plugin-pin"), "OpenBao knows no variable for a plugin's setting");
    const obj = buildConfigObject(c, text) as Json;
    assert.equal(obj.kind, "Secret");
    assert.ok(!JSON.stringify(obj).includes("canary-plugin-pin"), "base64 in data, not text");
    const sources = podOf(c).volumes.find((v: Json) => v.name === "config").projected.sources as Json[];
    assert.equal(sources[0].secret.name, "demo-config");
    assert.equal(sources[0].configMap, undefined);
    assert.deepEqual(inlineSealSecrets(c.spec as never), ["unseal.kms.pin"]);
  });

  it("self-init requests live in a Secret, emptied once initialized", () => {
    const c = cluster({ selfInit: { enabled: true } });
    const pending = buildSelfInitSecret(
      c,
      'initialize "x" { password = "canary-userpass" }\n',
      false,
    ) as Json;
    assert.equal(pending.kind, "Secret");
    assert.equal(pending.metadata.annotations["openbao.org/self-init"], "pending");
    assert.ok(decode(pending)["self-init.hcl"]!.includes("canary-userpass"));
    assert.ok(!JSON.stringify(pending).includes("canary-userpass"));
    const inert = buildSelfInitSecret(c, 'initialize "x" { password = "canary-userpass" }\n', true) as Json;
    assert.equal(inert.metadata.annotations["openbao.org/self-init"], "consumed");
    assert.ok(!decode(inert)["self-init.hcl"]!.includes("canary-userpass"));
    const sources = podOf(c).volumes.find((v: Json) => v.name === "config").projected.sources as Json[];
    assert.deepEqual(sources[1], {
      secret: {
        name: "demo-self-init",
        optional: true,
        items: [{ key: "self-init.hcl", path: "self-init.hcl" }],
      },
    });
  });

  it("the Hardened profile refuses inline credentials, naming each field and no value", () => {
    const spec = { ...cluster({ profile: "Hardened", unseal: CASES[1]!.unseal }).spec } as Record<
      string,
      unknown
    >;
    const problems = checkClusterSpec("demo", spec).filter((p) => p.field.startsWith("spec.unseal"));
    assert.deepEqual(
      problems.map((p) => p.field),
      ["spec.unseal.awskms.accessKey", "spec.unseal.awskms.secretKey", "spec.unseal.awskms.sessionToken"],
    );
    assert.ok(
      problems.every((p) => /Hardened profile refuses/.test(p.message) && !p.message.includes("canary")),
    );
    const dev = checkClusterSpec("demo", { ...spec, profile: "Development" });
    assert.ok(!dev.some((p) => p.field.startsWith("spec.unseal")), "outside Hardened they are accepted");
  });

  it("outside Hardened the status says SecurityRisk, naming the fields, not the values", () => {
    const c = cluster({ unseal: CASES[0]!.unseal });
    const status = nextStatus(
      c,
      {
        initialized: true,
        readyReplicas: 1,
        desiredReplicas: 1,
        inlineCredentials: ["spec.unseal.transit.token"],
      } as never,
      new Date(),
    );
    const risk = status.conditions?.find((x) => x.type === "SecurityRisk");
    assert.equal(risk?.status, "True");
    assert.equal(risk?.reason, "InlineCredentials");
    assert.ok(risk?.message.includes("spec.unseal.transit.token"));
    assert.ok(!JSON.stringify(status).includes("canary-transit-tok"));
    const clean = nextStatus(
      c,
      { initialized: true, readyReplicas: 1, desiredReplicas: 1 } as never,
      new Date(),
    );
    assert.equal(
      clean.conditions?.find((x) => x.type === "SecurityRisk"),
      undefined,
    );
  });
});
