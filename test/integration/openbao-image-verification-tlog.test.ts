import assert from "node:assert/strict";
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { CONFIGMAP, STATEFULSET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { parseTrustRoot } from "../../src/targets/openbao/imageverify/trust-root.js";
import { ImageVerifier, type VerifySettings } from "../../src/targets/openbao/imageverify/verifier.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { type OciRegistry, startOciRegistry } from "../../src/testenv/oci-registry.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { createKeylessCa, type KeylessCa } from "../support/keyless-ca.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";
import {
  bundleTlogEntry,
  createRekorLog,
  dsseBody,
  hashedRekordBody,
  type RekorLog,
  rekorResponse,
} from "../support/rekor-log.js";
import {
  type CosignKey,
  cosignAttachSignature,
  cosignKey,
  cosignSignBundle,
  cosignTrustedRootWithLog,
  cosignVerifyBundle,
  cosignVerifyLogged,
  pushTinyImage,
  rewriteBundle,
  simpleSigningPayload,
} from "../support/signed-images.js";

// The transparency log checked offline, against real cosign 2.5's verdicts. No Rekor runs here (it
// needs Trillian and a database): the test's log stand-in (support/rekor-log.ts) makes each entry
// and its SignedEntryTimestamp by Rekor's format, real `cosign attach signature --rekor-response`
// stores them in the `.sig` layer's bundle annotation, real `cosign trusted-root create` writes the
// trusted root holding the CA and the log's key, and for every case the verifier (ignoreTlog unset)
// must reach the verdict of `cosign verify --offline` without --insecure-ignore-tlog, refusing with
// cosign's reason words. The case that needs the log: a short-lived certificate that has expired
// since it signed is accepted because the log says when it signed, and refused under ignoreTlog.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
const VERSION = "2.7.2";
const ISSUER = "https://issuer.example.test";
const SUBJECT = "https://git.example.test/platform/openbao/.github/workflows/release.yml@refs/tags/v2.7.2";
const MIN = 60_000;

interface Case {
  name: string;
  /** How the signature and its entry are made. */
  make: {
    /** Certificate validity around now, in minutes; absent: signed with the key alone. */
    certificate?: { from: number; to: number };
    /** When the log took it, minutes from now; absent: no entry at all. */
    loggedAt?: number;
    /** The entry is signed by another key (under the trusted log's logID). */
    setByAnotherKey?: boolean;
    /** The entry comes from a log the trusted root does not list. */
    untrustedLog?: boolean;
    /** The entry body names another signature. */
    otherSignatureInBody?: boolean;
  };
  /** Our refusal and cosign's; both undefined: both accept. */
  refused?: RegExp;
  cosignRefused?: RegExp;
}

const CASES: Case[] = [
  { name: "logged, certificate valid now", make: { certificate: { from: -5, to: 60 }, loggedAt: -1 } },
  {
    name: "logged while the certificate was valid, expired since (Fulcio's 10-minute certificates)",
    make: { certificate: { from: -30, to: -20 }, loggedAt: -25 },
  },
  { name: "signed with the key, logged", make: { loggedAt: -1 } },
  {
    name: "no transparency-log entry",
    make: { certificate: { from: -5, to: 60 } },
    refused: /offline verification failed/,
    cosignRefused: /offline verification failed/,
  },
  {
    name: "SET signed by another key",
    make: { certificate: { from: -5, to: 60 }, loggedAt: -1, setByAnotherKey: true },
    refused: /unable to verify SET/,
    cosignRefused: /unable to verify SET/,
  },
  {
    name: "entry from a log the trusted root does not list",
    make: { certificate: { from: -5, to: 60 }, loggedAt: -1, untrustedLog: true },
    refused: /rekor log public key not found for payload/,
    cosignRefused: /rekor log public key not found for payload/,
  },
  {
    name: "entry body naming another signature",
    make: { certificate: { from: -5, to: 60 }, loggedAt: -1, otherSignatureInBody: true },
    refused: /signature in bundle does not match signature being verified/,
    cosignRefused: /signature in bundle does not match signature being verified/,
  },
  {
    name: "logged after the certificate expired",
    make: { certificate: { from: -30, to: -20 }, loggedAt: -10 },
    refused: /certificate expired before signatures were entered in log/,
    cosignRefused: /certificate expired before signatures were entered in log/,
  },
];

const repoOf = (c: Case) => `openbao-tlog-${CASES.indexOf(c)}`;

describe("image verification with the transparency log checked offline, against real cosign", () => {
  let registry: OciRegistry;
  let tool: CosignKey;
  let ca: KeylessCa;
  let rekor: RekorLog;
  let signer: { pub: string; priv: KeyObject };
  let rootJson: string;
  const digests = new Map<Case, string>();

  before(async () => {
    [registry, tool] = await Promise.all([startOciRegistry(makeTempDir("oci-registry")), cosignKey("tlog")]);
    ca = createKeylessCa("tlog-fulcio");
    rekor = createRekorLog();
    const otherLog = createRekorLog();
    const anotherKey = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey;
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
    signer = { pub: publicKey.export({ format: "pem", type: "spki" }).toString(), priv: privateKey };
    rootJson = await cosignTrustedRootWithLog(
      tool,
      ca.chainPem,
      rekor.publicKeyPem,
      new Date(Date.now() - 24 * 60 * MIN),
    );
    const now = Date.now();
    for (const c of CASES) {
      const repo = repoOf(c);
      const digest = await pushTinyImage(registry, repo, VERSION);
      digests.set(c, digest);
      const payload = simpleSigningPayload(`${registry.host}/${repo}`, digest);
      const signature = sign("sha256", payload, signer.priv);
      const m = c.make;
      const certificatePem = m.certificate
        ? ca.issue({
            publicKeyPem: signer.pub,
            issuer: ISSUER,
            subject: SUBJECT,
            notBefore: new Date(now + m.certificate.from * MIN),
            notAfter: new Date(now + m.certificate.to * MIN),
          })
        : undefined;
      let response: string | undefined;
      if (m.loggedAt !== undefined) {
        // Another signature by the same signer, over another payload: a body Rekor itself would
        // accept (its signature verifies over its hash), naming a signature that is not this one.
        const other = Buffer.from("another payload");
        const body = m.otherSignatureInBody
          ? hashedRekordBody(sign("sha256", other, signer.priv), certificatePem ?? signer.pub, other)
          : hashedRekordBody(signature, certificatePem ?? signer.pub, payload);
        const at = Math.floor((now + m.loggedAt * MIN) / 1000);
        const entry = (m.untrustedLog ? otherLog : rekor).enter(
          body,
          at,
          m.setByAnotherKey ? { signWith: anotherKey } : {},
        );
        response = rekorResponse(entry, signature);
      }
      await cosignAttachSignature(tool, `${registry.host}/${repo}@${digest}`, {
        payload,
        signature,
        ...(certificatePem ? { certificatePem, chainPem: ca.chainPem } : {}),
        ...(response ? { rekorResponse: response } : {}),
      });
    }
  });
  after(async () => {
    await registry?.stop();
  });

  it("reads the Rekor log from the trusted root cosign wrote", () => {
    const root = parseTrustRoot(rootJson, "cosign's trusted root");
    assert.equal(root.transparencyLogs.length, 1);
    assert.equal(root.transparencyLogs[0]!.logId, rekor.logId);
  });

  for (const c of CASES)
    it(`${c.name}: ${c.refused ? "refused" : "accepted"}, as cosign verify --offline has it`, async () => {
      const image = `${registry.host}/${repoOf(c)}@${digests.get(c)}`;
      const keyed = c.make.certificate === undefined;
      const cosign = await cosignVerifyLogged(
        tool,
        image,
        keyed ? { keyPem: signer.pub } : { issuer: ISSUER, subject: SUBJECT },
        { json: rootJson, chainPem: ca.chainPem, rekorPublicKeyPem: rekor.publicKeyPem },
      );
      const trustRoot = parseTrustRoot(rootJson, "cosign's trusted root");
      const settings: VerifySettings = keyed
        ? { field: "spec.imageVerification", publicKey: signer.pub, ignoreTlog: false, trustRoot }
        : { field: "spec.imageVerification", issuer: ISSUER, subject: SUBJECT, ignoreTlog: false, trustRoot };
      const ours = await new ImageVerifier().verify(image, settings).then(
        (ok) => ({ ok: true as const, digest: ok.digest }),
        (e: Error) => ({ ok: false as const, error: e.message }),
      );
      assert.equal(ours.ok, cosign.ok, `ours ${JSON.stringify(ours)}, cosign ${JSON.stringify(cosign)}`);
      if (c.refused) {
        assert.match((ours as { error: string }).error, c.refused);
        assert.match((cosign as { error: string }).error, c.cosignRefused!, "cosign's reason");
      } else assert.equal((ours as { digest: string }).digest, digests.get(c));
    });

  it("the operator, ignoreTlog unset: a logged image runs pinned though its certificate expired, an unlogged one is refused", async () => {
    const client: KubeClient = clientFor(sharedEnv().kubeconfigPath);
    const ns = await freshNamespace(client, "ob-imgverify-tlog");
    await installOpenBaoClusterCrd(client);
    await client.create(CONFIGMAP, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "sigstore-root", namespace: ns },
      data: { "trusted_root.json": rootJson },
    });
    const op = await startOpenBaoOperatorOnApi(
      sharedEnv().kubeconfigPath,
      ns,
      `    imageVerification: { trustedRootConfigMap: { namespace: ${ns}, name: sigstore-root } }\n`,
    );
    try {
      // Upstream's hardened block: issuer and subject, ignoreTlog left out.
      const block = { enabled: true, issuer: ISSUER, subject: SUBJECT };
      const logged = CASES[1]!;
      const unlogged = CASES[3]!;
      for (const [name, c] of [
        ["logged", logged],
        ["unlogged", unlogged],
      ] as const)
        await createOpenBaoCluster(client, ns, name, {
          replicas: 1,
          image: `${registry.host}/${repoOf(c)}:${VERSION}`,
          imageVerification: block,
        });
      const sts = (await eventually(
        () => client.getOrUndefined(STATEFULSET, "logged", ns),
        60_000,
        "the logged image's StatefulSet",
      )) as Json;
      assert.equal(
        sts.spec.template.spec.containers[0].image,
        `${registry.host}/${repoOf(logged)}@${digests.get(logged)}`,
      );
      const degraded = await eventually(
        async () => {
          const c = (await client.get(OPENBAOCLUSTER, "unlogged", ns)) as Json;
          const d = (c.status?.conditions ?? []).find((x: { type: string }) => x.type === "Degraded");
          return d?.reason === "ImageVerificationFailed" ? d : undefined;
        },
        60_000,
        "unlogged: Degraded=ImageVerificationFailed",
      );
      assert.match(
        degraded.message,
        /offline verification failed: the signature carries no transparency-log entry/,
      );
      assert.equal(
        await client.getOrUndefined(STATEFULSET, "unlogged", ns),
        undefined,
        "no StatefulSet for the unlogged image",
      );
    } finally {
      await op.stop();
      client.close();
    }
  });

  it("ignoreTlog: true keeps today's check: the expired certificate is judged now, and refused", async () => {
    const c = CASES[1]!;
    const image = `${registry.host}/${repoOf(c)}@${digests.get(c)}`;
    const trustRoot = parseTrustRoot(rootJson, "cosign's trusted root");
    await assert.rejects(
      new ImageVerifier().verify(image, {
        field: "spec.imageVerification",
        issuer: ISSUER,
        subject: SUBJECT,
        ignoreTlog: true,
        trustRoot,
      }),
      /the certificate expired at/,
    );
    // And a signature with no entry passes under ignoreTlog, as before.
    const none = CASES[3]!;
    const ok = await new ImageVerifier().verify(`${registry.host}/${repoOf(none)}@${digests.get(none)}`, {
      field: "spec.imageVerification",
      issuer: ISSUER,
      subject: SUBJECT,
      ignoreTlog: true,
      trustRoot,
    });
    assert.equal(ok.digest, digests.get(none));
  });
});

// cosign 3's format: a Sigstore bundle among the image's OCI referrers, its tlogEntries carrying a
// dsse 0.0.1 entry and its inclusion promise (the SET). cosign 2.5 writes the bundle (attest
// --new-bundle-format, without a log); the test adds the entry its log stand-in made, and real
// `cosign verify-attestation --new-bundle-format` (sigstore-go) checks it against the same root.
interface BundleCase {
  name: string;
  certificate?: { from: number; to: number };
  loggedAt?: number;
  setByAnotherKey?: boolean;
  refused?: RegExp;
  cosignRefused?: RegExp;
}
const BUNDLE_CASES: BundleCase[] = [
  {
    name: "keyless, logged while the certificate was valid, expired since",
    certificate: { from: -30, to: -20 },
    loggedAt: -25,
  },
  { name: "keyed, logged", loggedAt: -1 },
  {
    name: "keyless, no tlogEntries",
    certificate: { from: -5, to: 60 },
    refused: /offline verification failed/,
    cosignRefused: /not enough verified log entries from transparency log: 0 < 1/,
  },
  {
    name: "keyless, inclusion promise signed by another key",
    certificate: { from: -5, to: 60 },
    loggedAt: -1,
    setByAnotherKey: true,
    refused: /unable to verify SET/,
    cosignRefused: /not enough verified log entries from transparency log: 0 < 1/,
  },
  {
    name: "keyless, logged after the certificate expired",
    certificate: { from: -30, to: -20 },
    loggedAt: -10,
    refused: /certificate expired before signatures were entered in log/,
    cosignRefused: /integrated time outside certificate validity/,
  },
];

describe("cosign 3 bundles with a transparency-log entry, against real cosign", () => {
  let registry: OciRegistry;
  let tool: CosignKey;
  let ca: KeylessCa;
  let rekor: RekorLog;
  let rootJson: string;
  const digests = new Map<BundleCase, string>();
  const repoOf = (c: BundleCase) => `openbao-tlog-bundle-${BUNDLE_CASES.indexOf(c)}`;

  before(async () => {
    [registry, tool] = await Promise.all([
      startOciRegistry(makeTempDir("oci-registry")),
      cosignKey("tlog-bundle"),
    ]);
    ca = createKeylessCa("tlog-bundle-fulcio");
    rekor = createRekorLog();
    const anotherKey = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey;
    rootJson = await cosignTrustedRootWithLog(
      tool,
      ca.chainPem,
      rekor.publicKeyPem,
      new Date(Date.now() - 24 * 60 * MIN),
    );
    const now = Date.now();
    for (const c of BUNDLE_CASES) {
      const repo = repoOf(c);
      const digest = await pushTinyImage(registry, repo, VERSION);
      digests.set(c, digest);
      const at = `${registry.host}/${repo}@${digest}`;
      const cert = c.certificate
        ? ca.issue({
            publicKeyPem: tool.pub,
            issuer: ISSUER,
            subject: SUBJECT,
            notBefore: new Date(now + c.certificate.from * MIN),
            notAfter: new Date(now + c.certificate.to * MIN),
          })
        : undefined;
      await cosignSignBundle(tool, at, cert ? { pem: cert, chainPem: ca.chainPem } : undefined);
      const loggedAt = c.loggedAt;
      if (loggedAt === undefined) continue;
      await rewriteBundle(registry, repo, digest, (b) => {
        const body = dsseBody(
          JSON.stringify(b.bundle["dsseEnvelope"]),
          b.payload,
          b.signature,
          b.certificatePem ?? tool.pub,
        );
        const entry = rekor.enter(
          body,
          Math.floor((now + loggedAt * MIN) / 1000),
          c.setByAnotherKey ? { signWith: anotherKey } : {},
        );
        b.bundle["verificationMaterial"]["tlogEntries"] = [bundleTlogEntry(entry, "dsse")];
      });
    }
  });
  after(async () => {
    await registry?.stop();
  });

  for (const c of BUNDLE_CASES)
    it(`${c.name}: ${c.refused ? "refused" : "accepted"}, as cosign verify-attestation has it`, async () => {
      const image = `${registry.host}/${repoOf(c)}@${digests.get(c)}`;
      const keyed = c.certificate === undefined;
      const cosign = await cosignVerifyBundle(
        tool,
        image,
        keyed ? "key" : { issuer: ISSUER, subject: SUBJECT },
        { json: rootJson, chainPem: ca.chainPem },
        { checkTlog: true },
      );
      const trustRoot = parseTrustRoot(rootJson, "cosign's trusted root");
      const settings: VerifySettings = keyed
        ? { field: "spec.imageVerification", publicKey: tool.pub, ignoreTlog: false, trustRoot }
        : { field: "spec.imageVerification", issuer: ISSUER, subject: SUBJECT, ignoreTlog: false, trustRoot };
      const ours = await new ImageVerifier().verify(image, settings).then(
        (ok) => ({ ok: true as const, digest: ok.digest }),
        (e: Error) => ({ ok: false as const, error: e.message }),
      );
      assert.equal(ours.ok, cosign.ok, `ours ${JSON.stringify(ours)}, cosign ${JSON.stringify(cosign)}`);
      if (c.refused) {
        assert.match((ours as { error: string }).error, c.refused);
        assert.match((cosign as { error: string }).error, c.cosignRefused!, "cosign's reason");
      } else assert.equal((ours as { digest: string }).digest, digests.get(c));
    });
});
