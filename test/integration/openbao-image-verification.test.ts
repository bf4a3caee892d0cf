import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OpenBaoRestoreKind } from "../../src/apis/openbaorestore.js";
import { applyAny } from "../../src/runtime/apply.js";
import { CONFIGMAP, JOB, SECRET, STATEFULSET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EVENTS_V1, EventRecorder } from "../../src/runtime/events.js";
import type { Informer } from "../../src/runtime/informer.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { parseTrustRoot } from "../../src/targets/openbao/imageverify/trust-root.js";
import { ImageVerifier, type VerifySettings } from "../../src/targets/openbao/imageverify/verifier.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { executorRestoreJobs } from "../../src/targets/openbao/restore/defaults.js";
import { RestoreReconciler } from "../../src/targets/openbao/restore/reconciler.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { type OciRegistry, startOciRegistry } from "../../src/testenv/oci-registry.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { createKeylessCa, type KeylessCa } from "../support/keyless-ca.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { metricSum, startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";
import {
  type CosignIdentity,
  type CosignKey,
  cosignKey,
  cosignSign,
  cosignSignBundle,
  cosignSignWithCertificate,
  cosignTrustedRoot,
  cosignVerifyBundle,
  cosignVerifyKeyless,
  pushTinyImage,
} from "../support/signed-images.js";

// Image verification against real cosign signatures in a real registry on loopback: images signed
// by cosign with a key it generated (offline, no transparency log), one unsigned, one signed with
// another key. First the verifier alone, then the operator process on the real API server: a signed
// image gets the voter StatefulSet pinned to its digest; an unsigned or wrongly signed one under
// Block gets no StatefulSet at all and Degraded with upstream's reason naming the image; under Warn
// the StatefulSet is written with the image as given, and a Warning event says why. Last, the
// operator's own Job images under operatorImageVerification, through the restore controller: a
// refused executor image fails the restore before any Job exists, a signed one runs pinned.
// Keyless: real cosign signs with a key and a code-signing certificate from a private CA in
// Fulcio's role and writes that CA's trusted_root.json; the verifier, given it, must reach the same
// verdict as `cosign verify` on each identity case, and the operator reads it from its ConfigMap.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
const VERSION = "2.7.2";

describe("openbao image verification with cosign signatures (loopback registry, real API server)", () => {
  let registry: OciRegistry;
  let signer: CosignKey;
  let other: CosignKey;
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;
  const digests: Record<string, string> = {};
  let restoreNs: string | undefined;
  let keyless: CosignKey;
  let fulcio: KeylessCa;
  let layered: KeylessCa;
  // Each CA's trusted_root.json as `cosign trusted-root create` writes it: the operator reads that.
  const trustedRoots = new Map<KeylessCa, string>();
  const image = (repo: string) => `${registry.host}/${repo}:${VERSION}`;
  const ISSUER = "https://issuer.example.test";
  const SUBJECT = "https://git.example.test/platform/openbao/.github/workflows/release.yml@refs/tags/v2.7.2";

  before(async () => {
    [registry, signer, other, keyless] = await Promise.all([
      startOciRegistry(makeTempDir("oci-registry")),
      cosignKey("signer"),
      cosignKey("other"),
      cosignKey("keyless"),
    ]);
    const repos = ["openbao-signed", "openbao-unsigned", "openbao-otherkey"];
    const keylessRepos = [
      "openbao-keyless",
      "openbao-keyless-otherroot",
      "openbao-keyless-expired",
      "openbao-keyless-intermediate",
    ];
    // cosign 3's format: Sigstore bundles as OCI referrers (the registry has no referrers API, so
    // cosign keeps the sha256-<hex> fallback tag); the keyed one also has a legacy .sig by another key.
    const bundleRepos = ["openbao-bundle-keyed", "openbao-bundle-keyless", "openbao-bundle-otherroot"];
    for (const repo of [...repos, ...keylessRepos, ...bundleRepos])
      digests[repo] = await pushTinyImage(registry, repo, VERSION);
    await cosignSign(signer, `${registry.host}/openbao-signed@${digests["openbao-signed"]}`);
    await cosignSign(other, `${registry.host}/openbao-otherkey@${digests["openbao-otherkey"]}`);
    // One signer key, three certificates for it: from the trusted CA, from another CA, and expired.
    const now = Date.now();
    fulcio = createKeylessCa("test-fulcio");
    const untrusted = createKeylessCa("other-fulcio");
    // Public Fulcio's shape: a root and an intermediate that issues.
    layered = createKeylessCa("layered-fulcio", new Date(now), { intermediate: { rootPathLength: 1 } });
    const who = { publicKeyPem: keyless.pub, issuer: ISSUER, subject: SUBJECT };
    const valid = { notBefore: new Date(now - 60_000), notAfter: new Date(now + 3 * 3600_000) };
    for (const [repo, ca, times] of [
      ["openbao-keyless", fulcio, valid],
      ["openbao-keyless-otherroot", untrusted, valid],
      ["openbao-keyless-intermediate", layered, valid],
      [
        "openbao-keyless-expired",
        fulcio,
        { notBefore: new Date(now - 2 * 3600_000), notAfter: new Date(now - 3600_000) },
      ],
    ] as const)
      await cosignSignWithCertificate(
        keyless,
        `${registry.host}/${repo}@${digests[repo]}`,
        ca.issue({ ...who, ...times }),
        ca.chainPem,
      );
    for (const ca of [fulcio, layered]) trustedRoots.set(ca, await cosignTrustedRoot(keyless, ca.chainPem));
    const at = (repo: string) => `${registry.host}/${repo}@${digests[repo]}`;
    await cosignSignBundle(signer, at("openbao-bundle-keyed"));
    await cosignSign(other, at("openbao-bundle-keyed"));
    for (const [repo, ca] of [
      ["openbao-bundle-keyless", fulcio],
      ["openbao-bundle-otherroot", untrusted],
    ] as const)
      await cosignSignBundle(keyless, at(repo), {
        pem: ca.issue({ ...who, ...valid }),
        chainPem: ca.chainPem,
      });

    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "ob-imgverify");
    await installOpenBaoClusterCrd(client);
    // The operator's trusted root for keyless signatures: a ConfigMap, as upstream reads one.
    await client.create(CONFIGMAP, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "sigstore-root", namespace: ns },
      data: { "trusted_root.json": trustedRoots.get(fulcio)! },
    });
    op = await startOpenBaoOperatorOnApi(
      sharedEnv().kubeconfigPath,
      ns,
      `    imageVerification: { trustedRootConfigMap: { namespace: ${ns}, name: sigstore-root } }\n`,
    );
  });
  after(async () => {
    // No restore controller runs in the operator here: the test drops the finalizers itself.
    if (restoreNs)
      for (const r of (await client.list<KubeObject>(OPENBAORESTORE, { namespace: restoreNs })).items)
        await client
          .mergePatch(OPENBAORESTORE, r.metadata.name!, restoreNs, { metadata: { finalizers: null } })
          .catch(() => {});
    await op?.stop();
    client?.close();
    await registry?.stop();
  });

  const verification = (key: string, failurePolicy = "Block") => ({
    enabled: true,
    failurePolicy,
    publicKey: key,
    // Signed offline: there is no transparency-log entry to check.
    ignoreTlog: true,
  });
  const get = async (name: string): Promise<Json> => (await client.get(OPENBAOCLUSTER, name, ns)) as Json;
  const cond = (c: Json, type: string): Json | undefined =>
    (c["status"]?.conditions ?? []).find((x: Json) => x["type"] === type);
  const statefulSet = async (name: string): Promise<Json | undefined> =>
    (await client.getOrUndefined(STATEFULSET, name, ns)) as Json | undefined;
  const passes = async (name: string) =>
    metricSum(await op!.metrics(), "openbao_reconcile_duration_seconds_count", { namespace: ns, name });

  it("the verifier takes cosign's own signature, and refuses an unsigned image and another key's", async () => {
    const v = new ImageVerifier();
    const settings = { field: "spec.imageVerification", publicKey: signer.pub, ignoreTlog: true };
    const ok = await v.verify(image("openbao-signed"), settings);
    assert.equal(ok.digest, digests["openbao-signed"]);
    assert.equal(ok.pinned, `${registry.host}/openbao-signed@${digests["openbao-signed"]}`);
    assert.equal((await v.verify(image("openbao-signed"), settings)).cached, true);
    await assert.rejects(
      v.verify(image("openbao-unsigned"), settings),
      /is not signed: no sha256-[0-9a-f]{64}\.sig/,
    );
    await assert.rejects(
      v.verify(image("openbao-otherkey"), settings),
      /no signature verifies with spec\.imageVerification\.publicKey/,
    );
    // And the right key for that one.
    const byOther = await v.verify(image("openbao-otherkey"), { ...settings, publicKey: other.pub });
    assert.equal(byOther.digest, digests["openbao-otherkey"]);
  });

  it("a signed image: the voter StatefulSet runs it pinned to the verified digest", async () => {
    await createOpenBaoCluster(client, ns, "signed", {
      replicas: 1,
      image: image("openbao-signed"),
      imageVerification: verification(signer.pub),
    });
    const sts = await eventually(() => statefulSet("signed"), 60_000, "the signed cluster's StatefulSet");
    assert.equal(
      sts["spec"].template.spec.containers[0].image,
      `${registry.host}/openbao-signed@${digests["openbao-signed"]}`,
    );
    const c = await eventually(
      async () => {
        const x = await get("signed");
        return cond(x, "Degraded") ? x : undefined;
      },
      30_000,
      "the signed cluster's status",
    );
    assert.notEqual(cond(c, "Degraded")?.reason, "ImageVerificationFailed");
    assert.doesNotMatch(cond(c, "UnsupportedFields")?.message ?? "", /imageVerification/);
  });

  for (const [name, repo, why] of [
    ["unsigned", "openbao-unsigned", /is not signed/],
    ["otherkey", "openbao-otherkey", /no signature verifies with spec\.imageVerification\.publicKey/],
  ] as const) {
    it(`Block, ${name} image: Degraded with ImageVerificationFailed naming the image, and no StatefulSet`, async () => {
      await createOpenBaoCluster(client, ns, name, {
        replicas: 1,
        image: image(repo),
        imageVerification: verification(signer.pub),
      });
      const c = await eventually(
        async () => {
          const x = await get(name);
          return cond(x, "Degraded")?.reason === "ImageVerificationFailed" ? x : undefined;
        },
        60_000,
        `${name}: Degraded=ImageVerificationFailed`,
      );
      const degraded = cond(c, "Degraded")!;
      assert.equal(degraded.status, "True");
      assert.ok(degraded.message.includes(image(repo)), degraded.message);
      assert.match(degraded.message, why);
      // More passes, and still nothing that would run the image.
      const seen = await passes(name);
      await eventually(
        async () => ((await passes(name)) >= seen + 2 ? true : undefined),
        60_000,
        "two more passes",
      );
      assert.equal(await statefulSet(name), undefined, "no StatefulSet for a refused image");
    });
  }

  it("keyless: the verifier and real cosign verify reach the same verdict on each identity case", async () => {
    const v = new ImageVerifier();
    const settings = (identity: CosignIdentity, ca: KeylessCa): VerifySettings => ({
      field: "spec.imageVerification",
      ignoreTlog: true,
      trustRoot: parseTrustRoot(trustedRoots.get(ca)!, "cosign's trusted root"),
      ...identity,
    });
    const exact = { issuer: ISSUER, subject: SUBJECT };
    // name, repository, identity, our refusal, cosign's refusal (undefined: both admit).
    const mismatch = /none of the expected identities matched/;
    const cases: [string, string, CosignIdentity, RegExp?, RegExp?][] = [
      ["right identity", "openbao-keyless", exact, undefined],
      [
        "wrong issuer",
        "openbao-keyless",
        { issuer: "https://other-issuer.example.test", subject: SUBJECT },
        /OIDC issuer "https:\/\/issuer\.example\.test" is not spec\.imageVerification\.issuer/,
        mismatch,
      ],
      [
        "wrong subject",
        "openbao-keyless",
        { issuer: ISSUER, subject: `${SUBJECT}-rc1` },
        /subject \("https:\/\/git\.example\.test\/.*"\) is not spec\.imageVerification\.subject/,
        mismatch,
      ],
      [
        "RegExp identity",
        "openbao-keyless",
        {
          issuerRegExp: "^https://issuer\\.example\\.test$",
          subjectRegExp: "^https://git\\.example\\.test/platform/.+@refs/tags/v[0-9.]+$",
        },
        undefined,
      ],
      [
        // Unanchored, as cosign matches: a pattern found inside the value is enough.
        "unanchored RegExp",
        "openbao-keyless",
        { issuerRegExp: "issuer", subjectRegExp: "release\\.yml" },
        undefined,
      ],
      [
        "RegExp not matching",
        "openbao-keyless",
        {
          issuerRegExp: "^https://issuer\\.example\\.test$",
          subjectRegExp: "^https://git\\.example\\.test/other/",
        },
        /does not match spec\.imageVerification\.subjectRegExp/,
        mismatch,
      ],
      [
        "untrusted root",
        "openbao-keyless-otherroot",
        exact,
        /does not chain to a certificate authority of the trusted root/,
        /certificate signed by unknown authority/,
      ],
      [
        "expired certificate",
        "openbao-keyless-expired",
        exact,
        /the certificate expired at/,
        /expected a signed timestamp to verify an expired certificate/,
      ],
      ["issued by an intermediate CA", "openbao-keyless-intermediate", exact],
    ];
    for (const [name, repo, identity, refused, cosignRefused] of cases) {
      const ref = `${registry.host}/${repo}@${digests[repo]}`;
      // The intermediate-issued signature is checked against its own CA's root; the rest against fulcio.
      const ca = repo === "openbao-keyless-intermediate" ? layered : fulcio;
      const cosign = await cosignVerifyKeyless(keyless, ref, identity, ca.chainPem);
      const ours = await v.verify(ref, settings(identity, ca)).then(
        (ok) => ({ ok: true as const, digest: ok.digest }),
        (e: Error) => ({ ok: false as const, error: e.message }),
      );
      assert.equal(
        ours.ok,
        cosign.ok,
        `${name}: ours ${JSON.stringify(ours)}, cosign ${JSON.stringify(cosign)}`,
      );
      if (refused) {
        assert.match((ours as { error: string }).error, refused, name);
        assert.match((cosign as { error: string }).error, cosignRefused!, `${name}: cosign's reason`);
      } else assert.equal((ours as { digest: string }).digest, digests[repo], name);
    }
  });

  it("cosign 3 bundles (OCI referrers), keyed and keyless: the verifier and real cosign reach the same verdict", async () => {
    const v = new ImageVerifier();
    const root = { json: trustedRoots.get(fulcio)!, chainPem: fulcio.chainPem };
    const trustRoot = parseTrustRoot(root.json, "cosign's trusted root");
    const exact = { issuer: ISSUER, subject: SUBJECT };
    // name, repository, who signed, how it is verified, our refusal, cosign's (undefined: both admit).
    const cases: [string, string, CosignKey, CosignIdentity | "key", RegExp?, RegExp?][] = [
      ["keyed, the signer's key", "openbao-bundle-keyed", signer, "key"],
      [
        // Neither the bundle (signer's) nor the .sig (other's) was made with this key.
        "keyed, a key that signed neither",
        "openbao-bundle-keyed",
        keyless,
        "key",
        /no signature verifies with spec\.imageVerification\.publicKey \(2 checked\)/,
        /accepted signatures do not match threshold, Found: 0, Expected 1/,
      ],
      ["keyless, the accepted signer", "openbao-bundle-keyless", keyless, exact],
      [
        "keyless, another subject",
        "openbao-bundle-keyless",
        keyless,
        { issuer: ISSUER, subject: `${SUBJECT}-rc1` },
        /subject \("https:\/\/git\.example\.test\/.*"\) is not spec\.imageVerification\.subject/,
        /no matching CertificateIdentity found/,
      ],
      [
        "keyless, a certificate from another CA",
        "openbao-bundle-otherroot",
        keyless,
        exact,
        /does not chain to a certificate authority of the trusted root/,
        /leaf certificate verification failed/,
      ],
    ];
    for (const [name, repo, who, identity, refused, cosignRefused] of cases) {
      const ref = `${registry.host}/${repo}@${digests[repo]}`;
      const cosign = await cosignVerifyBundle(who, ref, identity, root);
      const settings: VerifySettings =
        identity === "key"
          ? { field: "spec.imageVerification", publicKey: who.pub, ignoreTlog: true }
          : { field: "spec.imageVerification", ignoreTlog: true, trustRoot, ...identity };
      const ours = await v.verify(ref, settings).then(
        (ok) => ({ ok: true as const, digest: ok.digest }),
        (e: Error) => ({ ok: false as const, error: e.message }),
      );
      assert.equal(
        ours.ok,
        cosign.ok,
        `${name}: ours ${JSON.stringify(ours)}, cosign ${JSON.stringify(cosign)}`,
      );
      if (refused) {
        assert.match((ours as { error: string }).error, refused, name);
        assert.match((cosign as { error: string }).error, cosignRefused!, `${name}: cosign's reason`);
      } else assert.equal((ours as { digest: string }).digest, digests[repo], name);
    }
    // Both formats on one image: the .sig's signer verifies it too (no bundle of its passes, the .sig does).
    const both = await v.verify(image("openbao-bundle-keyed"), {
      field: "spec.imageVerification",
      publicKey: other.pub,
      ignoreTlog: true,
    });
    assert.equal(both.digest, digests["openbao-bundle-keyed"]);
  });

  it("keyless: the operator reads its trusted root, runs the right signer's image pinned and refuses another subject", async () => {
    const keylessBlock = (subject: string) => ({ enabled: true, issuer: ISSUER, subject, ignoreTlog: true });
    await createOpenBaoCluster(client, ns, "keyless", {
      replicas: 1,
      image: image("openbao-keyless"),
      imageVerification: keylessBlock(SUBJECT),
    });
    await createOpenBaoCluster(client, ns, "keyless-wrong", {
      replicas: 1,
      image: image("openbao-keyless"),
      imageVerification: keylessBlock(`${SUBJECT}-rc1`),
    });
    const sts = await eventually(() => statefulSet("keyless"), 60_000, "the keyless cluster's StatefulSet");
    assert.equal(
      sts["spec"].template.spec.containers[0].image,
      `${registry.host}/openbao-keyless@${digests["openbao-keyless"]}`,
    );
    const c = await eventually(
      async () => {
        const x = await get("keyless-wrong");
        return cond(x, "Degraded")?.reason === "ImageVerificationFailed" ? x : undefined;
      },
      60_000,
      "keyless-wrong: Degraded=ImageVerificationFailed",
    );
    assert.match(cond(c, "Degraded")!.message, /is not spec\.imageVerification\.subject/);
    assert.equal(await statefulSet("keyless-wrong"), undefined, "no StatefulSet for a refused signer");
  });

  it("Warn, unsigned image: the StatefulSet runs the image as given, and a Warning event says why", async () => {
    await createOpenBaoCluster(client, ns, "warned", {
      replicas: 1,
      image: image("openbao-unsigned"),
      imageVerification: verification(signer.pub, "Warn"),
    });
    const sts = await eventually(() => statefulSet("warned"), 60_000, "the warned cluster's StatefulSet");
    assert.equal(sts["spec"].template.spec.containers[0].image, image("openbao-unsigned"));
    const event = await eventually(
      async () =>
        ((await client.list(EVENTS_V1, { namespace: ns })).items as Json[]).find(
          (e) => e["regarding"]?.name === "warned" && e["reason"] === "ImageVerificationFailed",
        ),
      30_000,
      "the Warning event",
    );
    assert.equal(event["type"], "Warning");
    assert.match(event["note"], /is not signed.*failurePolicy is Warn/);
    assert.notEqual(cond(await get("warned"), "Degraded")?.reason, "ImageVerificationFailed");
  });

  it("operatorImageVerification: a restore's unsigned executor image fails it with no Job; a signed one runs pinned", async () => {
    // A namespace the operator process does not watch: the restore controller here is the test's
    // own, and the test may say the cluster is initialized (a restore waits for that).
    const ns = await freshNamespace(client, "ob-imgverify-restore");
    restoreNs = ns;
    await createOpenBaoCluster(client, ns, "ops", {
      replicas: 1,
      operatorImageVerification: verification(signer.pub),
    });
    await client.mergePatch(
      OPENBAOCLUSTER,
      "ops",
      ns,
      {
        status: {
          initialized: true,
          conditions: [
            {
              type: "Available",
              status: "True",
              reason: "AllReplicasReady",
              message: "1/1",
              lastTransitionTime: "2026-12-01T09:00:00Z",
            },
          ],
        },
      },
      "status",
    );
    // The static restore token carries upstream's labels for its cluster and purpose.
    const restoreTokenLabels = {
      "openbao.org/cluster": "ops",
      "openbao.org/credential-purpose": "restore-token",
    };
    for (const name of ["restore-token", "s3-creds"])
      await client.create(SECRET, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name,
          namespace: ns,
          ...(name === "restore-token" ? { labels: restoreTokenLabels } : {}),
        },
        stringData: { token: "not-used" },
      });
    const restore = (name: string, repo: string) =>
      applyAny(
        client,
        {
          apiVersion: "openbao.org/v1alpha1",
          kind: OpenBaoRestoreKind,
          metadata: { name, namespace: ns },
          spec: {
            cluster: "ops",
            image: image(repo),
            source: {
              key: "snaps/ops.snap",
              target: {
                bucket: "snaps",
                endpoint: "http://s3.invalid:9000",
                credentialsSecretRef: { name: "s3-creds" },
              },
            },
            tokenSecretRef: { name: "restore-token" },
          },
        },
        { fieldManager: "test-user", force: true },
      );
    const verifier = new ImageVerifier();
    const events = new EventRecorder(client, "platform-operator/openbao", "test", silentLogger());
    const pass = async (name: string) => {
      const cur = await client.get<KubeObject>(OPENBAORESTORE, name, ns);
      await new RestoreReconciler({
        client,
        events,
        log: silentLogger(),
        restores: { get: () => cur, addHandler: () => {} } as unknown as Informer<never>,
        probe: async () => ({ exists: true, size: 4096 }),
        jobs: executorRestoreJobs(client, parseOpenBaoConfig({}, "targets.openbao"), verifier, events),
      }).reconcile(`${ns}/${name}`, { log: silentLogger(), signal: new AbortController().signal });
      return (await client.get<KubeObject>(OPENBAORESTORE, name, ns)) as Json;
    };
    const jobs = async () =>
      (await client.list<KubeObject>(JOB, { namespace: ns })).items.map((j) => j.metadata.name);

    await restore("unsigned", "openbao-unsigned");
    let r = await pass("unsigned");
    for (let i = 0; i < 3 && r["status"]?.phase !== "Failed"; i++) r = await pass("unsigned");
    assert.equal(r["status"]?.phase, "Failed");
    const validated = (r["status"].conditions as Json[]).find((c) => c["type"] === "Validated");
    assert.equal(validated?.["reason"], "RestoreExecutorImageVerificationFailed");
    assert.match(
      validated?.["message"],
      new RegExp(`restore executor image ${image("openbao-unsigned")} failed verification: .*is not signed`),
    );
    assert.deepEqual(await jobs(), [], "no Job for a refused executor image");
    assert.equal(
      ((await client.get(OPENBAOCLUSTER, "ops", ns)) as Json)["status"]?.operationLock,
      undefined,
      "the lock was released",
    );

    await restore("signed", "openbao-signed");
    r = await pass("signed");
    for (let i = 0; i < 3 && r["status"]?.phase !== "Running"; i++) r = await pass("signed");
    assert.equal(r["status"]?.phase, "Running", JSON.stringify(r["status"]));
    const job = (await client.get<KubeObject>(JOB, r["status"].jobName, ns)) as Json;
    assert.equal(
      job["spec"].template.spec.containers[0].image,
      `${registry.host}/openbao-signed@${digests["openbao-signed"]}`,
    );
  });
});
