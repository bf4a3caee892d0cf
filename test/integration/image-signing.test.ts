import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { offlineCosignEnv, runCosign } from "../../src/testenv/cosign.js";
import { type WrittenImage, writeOperatorImage } from "../../src/testenv/image.js";
import { type Descriptor, OCI_MANIFEST } from "../../src/testenv/node/images/archive.js";
import { pushBlob, pushManifest, pushOciLayout } from "../../src/testenv/oci-push.js";
import { type OciRegistry, startOciRegistry } from "../../src/testenv/oci-registry.js";
import { LOOPBACK } from "../../src/testenv/ports.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

// The publisher's signing step from docs/image.md, run for real and offline: the image `npm run image`
// writes is pushed to a real registry on loopback, signed by digest with a key pair cosign generates
// here, its SLSA provenance and CycloneDX SBOM attached as signed attestations, and all of it verified
// with cosign against the public key alone. Every proxy variable points at a listener of this test
// that counts connections: Go sends loopback traffic direct and everything else to the proxy, so a
// count of zero shows that no Sigstore service, TUF root or other host was asked. Then the image under
// the tag changes, and verification of the tag fails.

const REPOSITORY = "platform-operator";
const TAG = "0.1.0";

interface Envelope {
  payloadType: string;
  payload: string;
}
interface Statement {
  predicateType: string;
  subject: { digest: { sha256: string } }[];
  predicate: unknown;
}

describe("signing the operator image with cosign (offline, on a loopback registry)", () => {
  let image: WrittenImage;
  let out: string;
  let registry: OciRegistry;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let proxy: Server;
  let escapes = 0;
  const cosign = (args: string[]) => runCosign(args, { env, cwd: home });
  const byDigest = () => `${registry.host}/${REPOSITORY}@${image.digest}`;
  const byTag = () => `${registry.host}/${REPOSITORY}:${TAG}`;
  // --allow-http-registry: the loopback registry speaks plain HTTP; no transparency log is written
  // to or read (no Rekor offline), which is why verification needs --insecure-ignore-tlog.
  const SIGN = ["--key", "cosign.key", "--tlog-upload=false", "--allow-http-registry", "--yes"];
  const VERIFY = ["--key", "cosign.pub", "--insecure-ignore-tlog", "--allow-http-registry"];

  before(async () => {
    out = makeTempDir("image-signing");
    proxy = createServer((socket) => {
      escapes++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => proxy.listen(0, LOOPBACK, resolve));
    const port = (proxy.address() as { port: number }).port;
    home = makeTempDir("cosign-home");
    env = offlineCosignEnv(home, "test-only key password", `http://${LOOPBACK}:${port}`);
    [image, registry] = await Promise.all([
      writeOperatorImage(join(out, "image"), () => {}),
      startOciRegistry(makeTempDir("oci-registry")),
    ]);
    await pushOciLayout(image.layout, image.digest, registry.url, REPOSITORY, TAG);
    await cosign(["generate-key-pair"]);
  });

  after(async () => {
    await registry?.stop();
    if (proxy) await new Promise((resolve) => proxy.close(resolve));
  });

  it("signs the image digest and verifies the signature by digest and by tag", async () => {
    await cosign(["sign", ...SIGN, byDigest()]);
    for (const ref of [byDigest(), byTag()]) {
      const { stdout } = await cosign(["verify", ...VERIFY, ref]);
      const claims = JSON.parse(stdout) as { critical: { image: { "docker-manifest-digest": string } } }[];
      assert.deepEqual(
        claims.map((c) => c.critical.image["docker-manifest-digest"]),
        [image.digest],
        `${ref}: one signature, over the image digest`,
      );
    }
  });

  it("attests the SLSA provenance and the SBOM, and verify-attestation gives back the same predicates", async () => {
    const provenance = JSON.parse(readFileSync(join(out, "image", "provenance.intoto.json"), "utf8")) as {
      predicate: unknown;
    };
    const sbom = JSON.parse(readFileSync(join(out, "image", "sbom.cdx.json"), "utf8")) as unknown;
    const cases = [
      {
        type: "slsaprovenance1",
        predicateType: "https://slsa.dev/provenance/v1",
        file: "provenance.json",
        written: provenance.predicate,
        expected: cosignSlsaSpelling(provenance.predicate),
      },
      {
        type: "cyclonedx",
        predicateType: "https://cyclonedx.org/bom",
        file: "sbom.json",
        written: sbom,
        expected: sbom,
      },
    ];
    for (const c of cases) {
      const path = join(home, c.file);
      writeFileSync(path, JSON.stringify(c.written));
      await cosign(["attest", ...SIGN, "--type", c.type, "--predicate", path, byDigest()]);
    }
    for (const c of cases) {
      const { stdout } = await cosign(["verify-attestation", ...VERIFY, "--type", c.type, byTag()]);
      const statements = stdout
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Envelope)
        .map((e) => {
          assert.equal(e.payloadType, "application/vnd.in-toto+json");
          return JSON.parse(Buffer.from(e.payload, "base64").toString("utf8")) as Statement;
        });
      assert.equal(statements.length, 1, `one ${c.type} attestation`);
      const statement = statements[0]!;
      assert.equal(statement.predicateType, c.predicateType);
      assert.deepEqual(
        statement.subject.map((s) => `sha256:${s.digest.sha256}`),
        [image.digest],
      );
      assert.deepEqual(statement.predicate, c.expected, `the ${c.type} predicate is ours, unchanged`);
    }
  });

  it("refuses a key that did not sign", async () => {
    const other = makeTempDir("cosign-other");
    const otherEnv = offlineCosignEnv(other, "another password", env["HTTPS_PROXY"]);
    await runCosign(["generate-key-pair"], { env: otherEnv, cwd: other });
    const pub = join(other, "cosign.pub");
    await assert.rejects(
      cosign(["verify", "--key", pub, "--insecure-ignore-tlog", "--allow-http-registry", byDigest()]),
      /no matching signatures: invalid signature/,
    );
    await assert.rejects(
      cosign([
        "verify-attestation",
        "--key",
        pub,
        "--insecure-ignore-tlog",
        "--allow-http-registry",
        "--type",
        "slsaprovenance1",
        byDigest(),
      ]),
      /no matching attestations/,
    );
  });

  it("fails verification once the image under the tag changes, even with the signature copied along", async () => {
    // Another config (one more environment variable) is another image: another manifest digest.
    const blob = (d: string) => join(image.layout, "blobs", "sha256", d.replace(/^sha256:/, ""));
    const manifest = JSON.parse(readFileSync(blob(image.digest), "utf8")) as {
      config: Descriptor;
      layers: Descriptor[];
    };
    const config = JSON.parse(readFileSync(blob(manifest.config.digest), "utf8")) as {
      config: { Env?: string[] };
    };
    config.config.Env = [...(config.config.Env ?? []), "CHANGED_AFTER_SIGNING=1"];
    const configBytes = Buffer.from(JSON.stringify(config));
    const configDigest = `sha256:${sha256(configBytes)}`;
    await pushBlob(registry.url, REPOSITORY, configDigest, configBytes);
    const changed = Buffer.from(
      JSON.stringify({
        ...manifest,
        config: { ...manifest.config, digest: configDigest, size: configBytes.length },
      }),
    );
    const changedDigest = await pushManifest(registry.url, REPOSITORY, TAG, OCI_MANIFEST, changed);
    assert.notEqual(changedDigest, image.digest);

    await assert.rejects(cosign(["verify", ...VERIFY, byTag()]), /no signatures found/);
    // The signature still holds for the digest it was made over.
    await cosign(["verify", ...VERIFY, byDigest()]);

    // Copying the signature to the new digest's signature tag does not help: the signed payload
    // names the digest it covers.
    const sigTag = (digest: string) => `${digest.replace(":", "-")}.sig`;
    const sig = await fetch(`${registry.url}/v2/${REPOSITORY}/manifests/${sigTag(image.digest)}`, {
      headers: { Accept: OCI_MANIFEST },
    });
    assert.equal(sig.status, 200);
    const sigType = sig.headers.get("content-type") ?? OCI_MANIFEST;
    const sigBytes = Buffer.from(await sig.arrayBuffer());
    await pushManifest(registry.url, REPOSITORY, sigTag(changedDigest), sigType, sigBytes);
    await assert.rejects(
      cosign(["verify", ...VERIFY, byTag()]),
      new RegExp(`invalid or missing digest in claim: ${image.digest}`),
    );
  });

  it("never reached beyond loopback, though the proxy would have seen any attempt", async () => {
    assert.equal(escapes, 0, "no connection to the proxy during signing and verification");
    // A host outside loopback goes to the proxy, and so fails: the same environment would have
    // caught any request for a Sigstore service, a TUF root or another registry.
    await assert.rejects(
      cosign(["verify", ...VERIFY, `registry.example.invalid/${REPOSITORY}@${image.digest}`]),
      /registry\.example\.invalid/,
    );
    assert.ok(escapes > 0, "the proxy saw the request for the outside registry");
  });
});

/**
 * cosign 2.5 decodes a slsaprovenance1 predicate into in-toto-golang's SLSA v1 struct and encodes it
 * again; the struct spells the spec's runDetails.metadata.invocationId as invocationID (Go's decoder
 * matches keys case-insensitively, so the value survives under that name). Everything else comes
 * back as written.
 */
function cosignSlsaSpelling(predicate: unknown): unknown {
  const copy = structuredClone(predicate) as { runDetails?: { metadata?: Record<string, unknown> } };
  const metadata = copy.runDetails?.metadata;
  if (metadata && "invocationId" in metadata) {
    metadata["invocationID"] = metadata["invocationId"];
    delete metadata["invocationId"];
  }
  return copy;
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
