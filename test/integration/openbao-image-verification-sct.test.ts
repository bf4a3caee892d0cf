import assert from "node:assert/strict";
import { generateKeyPairSync, sign } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { parseTrustRoot } from "../../src/targets/openbao/imageverify/trust-root.js";
import { ImageVerifier } from "../../src/targets/openbao/imageverify/verifier.js";
import { type OciRegistry, startOciRegistry } from "../../src/testenv/oci-registry.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { createKeylessCa, type KeylessCa, type SignerCertificateRequest } from "../support/keyless-ca.js";
import {
  type CosignKey,
  cosignAttachSignature,
  cosignKey,
  cosignTrustedRoot,
  cosignVerifyWithSct,
  pushTinyImage,
  simpleSigningPayload,
} from "../support/signed-images.js";

// Keyless signatures whose certificates carry embedded SCTs (RFC 6962), on a loopback registry,
// signed by real cosign. The test CA plays Fulcio: it sends a precertificate (with the poison
// extension) to a CT log stand-in with its own P-256 key, which signs an SCT, and the certificate
// carries the SCT list. The trusted root is written by real `cosign trusted-root create --ctfe-key`,
// so it lists the CT log as cosign lists one. The verifier, given that root, must reach real
// `cosign verify`'s verdict (SCTs checked: no --insecure-ignore-sct) on each case: a valid SCT, an
// SCT from a log the root does not list, a broken SCT signature, and no SCT at all. `cosign sign`
// checks a certificate's SCTs itself (and fetches CT keys), so the signatures are made here and
// stored by real `cosign attach signature`, which stores them as `cosign sign` does.

const ISSUER = "https://issuer.example.test";
const SUBJECT = "https://git.example.test/platform/openbao/.github/workflows/release.yml@refs/tags/v2.7.2";
const VERSION = "2.7.2";

describe("keyless image verification with embedded SCTs, against real cosign (loopback registry)", () => {
  let registry: OciRegistry;
  let keyless: CosignKey;
  let fulcio: KeylessCa;
  let rootJson: string;
  const digests: Record<string, string> = {};
  const cases: [NonNullable<SignerCertificateRequest["sct"]>, string][] = [
    ["valid", "openbao-sct-valid"],
    ["unknown-log", "openbao-sct-unknown-log"],
    ["tampered", "openbao-sct-tampered"],
    ["none", "openbao-sct-none"],
  ];
  const at = (repo: string) => `${registry.host}/${repo}@${digests[repo]}`;

  before(async () => {
    [registry, keyless] = await Promise.all([
      startOciRegistry(makeTempDir("oci-registry")),
      cosignKey("sct"),
    ]);
    fulcio = createKeylessCa("ct-fulcio", new Date(), { ctLog: true });
    const now = Date.now();
    const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    for (const [sct, repo] of cases) {
      digests[repo] = await pushTinyImage(registry, repo, VERSION);
      const payload = simpleSigningPayload(`${registry.host}/${repo}`, digests[repo]!);
      await cosignAttachSignature(keyless, at(repo), {
        payload,
        signature: sign("sha256", payload, privateKey),
        certificatePem: fulcio.issue({
          publicKeyPem: publicKey.export({ format: "pem", type: "spki" }).toString(),
          issuer: ISSUER,
          subject: SUBJECT,
          notBefore: new Date(now - 60_000),
          notAfter: new Date(now + 3 * 3600_000),
          sct,
        }),
        chainPem: fulcio.chainPem,
      });
    }
    rootJson = await cosignTrustedRoot(keyless, fulcio.chainPem, {
      ctfeKeyPem: fulcio.ctLogPublicKeyPem!,
      ctfeStart: fulcio.ctLogStart!,
    });
  });

  after(async () => {
    await registry?.stop();
  });

  it("cosign's trusted root lists the CT log as the verifier reads it", () => {
    const root = parseTrustRoot(rootJson, "cosign's trusted root");
    assert.equal(root.ctLogs.length, 1);
    const ours = parseTrustRoot(fulcio.trustedRootJson(), "ours");
    assert.equal(root.ctLogs[0]!.logId, ours.ctLogs[0]!.logId, "logId.keyId is sha256 of the key");
  });

  it("the verifier and real cosign verify reach the same verdict on each SCT case", async () => {
    const v = new ImageVerifier();
    const settings = {
      field: "spec.imageVerification",
      ignoreTlog: true,
      issuer: ISSUER,
      subject: SUBJECT,
      trustRoot: parseTrustRoot(rootJson, "cosign's trusted root"),
    };
    // case, our refusal (undefined: admitted)
    const expected: Record<string, RegExp | undefined> = {
      valid: undefined,
      "unknown-log":
        /unable to meet threshold of 1: ctfe public key not found for an embedded SCT: its CT log \(log ID [0-9a-f]{64}\) is not in the trusted root/,
      tampered: /error verifying embedded SCT: its signature does not verify with its CT log's key/,
      none: /certificate does not include required embedded SCT/,
    };
    for (const [sct, repo] of cases) {
      const cosign = await cosignVerifyWithSct(
        keyless,
        at(repo),
        { issuer: ISSUER, subject: SUBJECT },
        { json: rootJson, chainPem: fulcio.chainPem, ctLogPublicKeyPem: fulcio.ctLogPublicKeyPem! },
      );
      const ours = await v.verify(at(repo), settings).then(
        () => ({ ok: true as const }),
        (e: Error) => ({ ok: false as const, error: e.message }),
      );
      const want = expected[sct];
      if (!want) {
        assert.deepEqual(cosign, { ok: true }, `${sct}: cosign admits`);
        assert.deepEqual(ours, { ok: true }, `${sct}: the verifier admits`);
      } else {
        assert.equal(cosign.ok, false, `${sct}: cosign refuses`);
        assert.equal(ours.ok, false, `${sct}: the verifier refuses`);
        assert.match(ours.ok ? "" : ours.error, want, sct);
      }
      console.log(
        `# ${sct}: cosign ${cosign.ok ? "admits" : `refuses: ${cosign.error.split("\n").filter(Boolean).slice(-1)[0]}`}`,
      );
    }
  });
});
