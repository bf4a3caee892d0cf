import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { offlineCosignEnv, runCosign } from "../../src/testenv/cosign.js";
import { OCI_MANIFEST } from "../../src/testenv/node/images/archive.js";
import { pushBlob, pushManifest } from "../../src/testenv/oci-push.js";
import type { OciRegistry } from "../../src/testenv/oci-registry.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

// Small images in the tests' loopback registry, signed (or not) by real cosign with keys it
// generates, offline: what image verification is tested against. An image here is a config blob and
// no layers — enough for a manifest digest and a signature, not for a pod to run.

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

/** A cosign key pair in a folder of its own: `pub` is the PEM public key. */
export interface CosignKey {
  dir: string;
  env: NodeJS.ProcessEnv;
  pub: string;
}

export async function cosignKey(name: string): Promise<CosignKey> {
  const dir = makeTempDir(`cosign-${name}`);
  const env = offlineCosignEnv(dir, `test-only password ${name}`);
  await runCosign(["generate-key-pair"], { env, cwd: dir });
  return { dir, env, pub: readFileSync(join(dir, "cosign.pub"), "utf8") };
}

/** Pushes a one-blob image as `repository:tag`; returns its manifest digest. */
export async function pushTinyImage(
  registry: OciRegistry,
  repository: string,
  tag: string,
  marker = `${repository}:${tag}`,
): Promise<string> {
  const config = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: { Env: [`MARKER=${marker}`] },
      rootfs: { type: "layers", diff_ids: [] },
    }),
  );
  await pushBlob(registry.url, repository, sha256(config), config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: sha256(config),
        size: config.length,
      },
      layers: [],
    }),
  );
  return pushManifest(registry.url, repository, tag, OCI_MANIFEST, manifest);
}

/** Signs the image by digest with `key`, no transparency log (there is none offline). */
export async function cosignSign(key: CosignKey, imageByDigest: string): Promise<void> {
  await runCosign(
    ["sign", "--key", "cosign.key", "--tlog-upload=false", "--allow-http-registry", "--yes", imageByDigest],
    { env: key.env, cwd: key.dir },
  );
}

/**
 * Signs the image by digest with `key` and a signing certificate for it (keyless as a private
 * Fulcio would have it: the certificate and its chain go into the signature), no transparency log.
 */
export async function cosignSignWithCertificate(
  key: CosignKey,
  imageByDigest: string,
  certificatePem: string,
  chainPem: string,
): Promise<void> {
  const tag = createHash("sha256").update(certificatePem).digest("hex").slice(0, 12);
  writeFileSync(join(key.dir, `${tag}.crt`), certificatePem);
  writeFileSync(join(key.dir, `${tag}.chain`), chainPem);
  await runCosign(
    [
      "sign",
      "--key",
      "cosign.key",
      "--certificate",
      `${tag}.crt`,
      "--certificate-chain",
      `${tag}.chain`,
      "--tlog-upload=false",
      "--allow-http-registry",
      "--yes",
      imageByDigest,
    ],
    { env: key.env, cwd: key.dir },
  );
}

/** A keyless identity as cosign's verify flags take it: exact values or patterns. */
export type CosignIdentity =
  | { issuer: string; subject: string }
  | { issuerRegExp: string; subjectRegExp: string };

/**
 * Whether real `cosign verify` accepts the image's keyless signature for the identity, with `chainPem`
 * (the issuing CA first, the root last) as the only trusted CA and no transparency log or SCT (none exists offline); the error text when not.
 */
export async function cosignVerifyKeyless(
  key: CosignKey,
  image: string,
  identity: CosignIdentity,
  chainPem: string,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const root = `root-${createHash("sha256").update(chainPem).digest("hex").slice(0, 12)}.pem`;
  writeFileSync(join(key.dir, root), chainPem);
  const who =
    "issuer" in identity
      ? ["--certificate-oidc-issuer", identity.issuer, "--certificate-identity", identity.subject]
      : [
          "--certificate-oidc-issuer-regexp",
          identity.issuerRegExp,
          "--certificate-identity-regexp",
          identity.subjectRegExp,
        ];
  try {
    await runCosign(
      [
        "verify",
        ...who,
        "--certificate-chain",
        root,
        "--insecure-ignore-tlog",
        "--insecure-ignore-sct",
        "--allow-http-registry",
        image,
      ],
      { env: key.env, cwd: key.dir },
    );
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/**
 * The CA chain (issuing CA first, root last) as a Sigstore trusted root, written by real cosign;
 * with `ctfeKeyPem`, the CT log with that key is listed too (`--ctfe-key`), valid from `ctfeStart`.
 */
export async function cosignTrustedRoot(
  key: CosignKey,
  chainPem: string,
  ct?: { ctfeKeyPem: string; ctfeStart: Date },
): Promise<string> {
  const name = `trusted-root-${createHash("sha256")
    .update(chainPem + (ct?.ctfeKeyPem ?? ""))
    .digest("hex")
    .slice(0, 12)}`;
  writeFileSync(join(key.dir, `${name}.pem`), chainPem);
  const ctArgs: string[] = [];
  if (ct) {
    writeFileSync(join(key.dir, `${name}.ctfe.pub`), ct.ctfeKeyPem);
    ctArgs.push("--ctfe-key", `${name}.ctfe.pub`, "--ctfe-start-time", ct.ctfeStart.toISOString());
  }
  await runCosign(
    ["trusted-root", "create", "--certificate-chain", `${name}.pem`, ...ctArgs, "--out", `${name}.json`],
    { env: key.env, cwd: key.dir },
  );
  return readFileSync(join(key.dir, `${name}.json`), "utf8");
}

/**
 * Whether real `cosign verify` accepts the image's keyless `.sig` signature with its embedded SCTs
 * checked (no --insecure-ignore-sct; the transparency log is ignored): against `root`, the trusted
 * root listing the CA and the CT log. cosign 2.5 still loads the Fulcio roots and CT log keys from
 * its TUF cache for this path: SIGSTORE_ROOT_FILE and SIGSTORE_CT_LOG_PUBLIC_KEY_FILE give it the
 * same CA chain and CT log key instead, offline.
 */
export async function cosignVerifyWithSct(
  tool: CosignKey,
  image: string,
  identity: { issuer: string; subject: string },
  root: { json: string; chainPem: string; ctLogPublicKeyPem: string },
): Promise<{ ok: true } | { ok: false; error: string }> {
  const name = `sct-${createHash("sha256").update(root.json).digest("hex").slice(0, 12)}`;
  writeFileSync(join(tool.dir, `${name}.json`), root.json);
  writeFileSync(join(tool.dir, `${name}.chain.pem`), root.chainPem);
  writeFileSync(join(tool.dir, `${name}.ctfe.pub`), root.ctLogPublicKeyPem);
  try {
    await runCosign(
      [
        "verify",
        "--certificate-oidc-issuer",
        identity.issuer,
        "--certificate-identity",
        identity.subject,
        "--trusted-root",
        `${name}.json`,
        "--insecure-ignore-tlog",
        "--allow-http-registry",
        image,
      ],
      {
        env: {
          ...tool.env,
          SIGSTORE_ROOT_FILE: join(tool.dir, `${name}.chain.pem`),
          SIGSTORE_CT_LOG_PUBLIC_KEY_FILE: join(tool.dir, `${name}.ctfe.pub`),
        },
        cwd: tool.dir,
      },
    );
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/** The predicate of a cosign 3 image signature. */
export const COSIGN_SIGN_PREDICATE = "https://sigstore.dev/cosign/sign/v1";

/**
 * Signs the image by digest the way cosign 3 does by default: a Sigstore bundle (a DSSE-signed
 * in-toto Statement of predicate COSIGN_SIGN_PREDICATE naming the digest) attached as an OCI
 * referrer. The cached cosign is 2.5, whose `sign` has no --new-bundle-format; its `attest
 * --new-bundle-format` with that predicate and an empty predicate body writes the same artifact.
 * With `certificate`, keyless as a private Fulcio would have it; no transparency log.
 */
export async function cosignSignBundle(
  key: CosignKey,
  imageByDigest: string,
  certificate?: { pem: string; chainPem: string },
): Promise<void> {
  writeFileSync(join(key.dir, "empty-predicate.json"), "{}");
  const cert: string[] = [];
  if (certificate) {
    const tag = createHash("sha256").update(certificate.pem).digest("hex").slice(0, 12);
    writeFileSync(join(key.dir, `${tag}.crt`), certificate.pem);
    writeFileSync(join(key.dir, `${tag}.chain`), certificate.chainPem);
    cert.push("--certificate", `${tag}.crt`, "--certificate-chain", `${tag}.chain`);
  }
  await runCosign(
    [
      "attest",
      "--new-bundle-format",
      "--type",
      COSIGN_SIGN_PREDICATE,
      "--predicate",
      "empty-predicate.json",
      "--key",
      "cosign.key",
      ...cert,
      "--tlog-upload=false",
      "--allow-http-registry",
      "--yes",
      imageByDigest,
    ],
    { env: key.env, cwd: key.dir },
  );
}

/**
 * Whether real cosign accepts the image's bundle signature: `verify-attestation --new-bundle-format`
 * for COSIGN_SIGN_PREDICATE (2.5's `verify` does not read bundles), against `trustedRootJson`, with
 * `key.pub` when `identity` is "key", else keylessly for the identity; no SCT, and no transparency
 * log unless `checkTlog` (then the bundle's tlogEntries are checked with the root's Rekor keys).
 * cosign 2.5 still loads Fulcio roots for keyless before reading --trusted-root: SIGSTORE_ROOT_FILE
 * gives it the same CA chain instead of the public TUF repository.
 */
export async function cosignVerifyBundle(
  key: CosignKey,
  image: string,
  identity: CosignIdentity | "key",
  trustedRoot: { json: string; chainPem: string },
  opts: { checkTlog?: boolean } = {},
): Promise<{ ok: true } | { ok: false; error: string }> {
  const name = `bundle-root-${createHash("sha256").update(trustedRoot.json).digest("hex").slice(0, 12)}`;
  writeFileSync(join(key.dir, `${name}.json`), trustedRoot.json);
  writeFileSync(join(key.dir, `${name}.pem`), trustedRoot.chainPem);
  const who =
    identity === "key"
      ? ["--key", "cosign.pub"]
      : "issuer" in identity
        ? ["--certificate-oidc-issuer", identity.issuer, "--certificate-identity", identity.subject]
        : [
            "--certificate-oidc-issuer-regexp",
            identity.issuerRegExp,
            "--certificate-identity-regexp",
            identity.subjectRegExp,
          ];
  try {
    await runCosign(
      [
        "verify-attestation",
        "--new-bundle-format",
        "--type",
        COSIGN_SIGN_PREDICATE,
        "--trusted-root",
        `${name}.json`,
        ...who,
        ...(opts.checkTlog ? [] : ["--insecure-ignore-tlog"]),
        "--insecure-ignore-sct",
        "--allow-http-registry",
        image,
      ],
      { env: { ...key.env, SIGSTORE_ROOT_FILE: join(key.dir, `${name}.pem`) }, cwd: key.dir },
    );
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/** The simple-signing payload `cosign sign` writes for an image digest (cosign 2.5's `generate` cannot parse loopback references). */
export function simpleSigningPayload(repository: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { "docker-reference": repository },
        image: { "docker-manifest-digest": digest },
        type: "cosign container image signature",
      },
      optional: null,
    }),
  );
}

/**
 * Attaches a signature made elsewhere as a `.sig` layer with real `cosign attach signature`: the
 * payload, the signature, a certificate and chain (keyless), and a Rekor entry (`--rekor-response`,
 * cosign's LocalSignedPayload JSON) that cosign writes into the layer's `dev.sigstore.cosign/bundle`
 * annotation. How a signature logged in a transparency log is stored, without a Rekor.
 */
export async function cosignAttachSignature(
  tool: CosignKey,
  imageByDigest: string,
  s: {
    payload: Buffer;
    signature: Buffer;
    certificatePem?: string;
    chainPem?: string;
    rekorResponse?: string;
  },
): Promise<void> {
  const tag = createHash("sha256").update(s.signature).digest("hex").slice(0, 12);
  const file = (suffix: string, text: string | Buffer) => {
    writeFileSync(join(tool.dir, `${tag}.${suffix}`), text);
    return `${tag}.${suffix}`;
  };
  const args = ["attach", "signature", "--payload", file("payload", s.payload)];
  args.push("--signature", file("sig", s.signature.toString("base64")));
  if (s.certificatePem) args.push("--certificate", file("crt", s.certificatePem));
  if (s.chainPem) args.push("--certificate-chain", file("chain", s.chainPem));
  if (s.rekorResponse) args.push("--rekor-response", file("rekor.json", s.rekorResponse));
  await runCosign([...args, "--allow-http-registry", imageByDigest], { env: tool.env, cwd: tool.dir });
}

/**
 * A Sigstore trusted root written by real `cosign trusted-root create`: the CA chain (issuing CA
 * first) and a Rekor log's key, valid from `rekorStart`.
 */
export async function cosignTrustedRootWithLog(
  tool: CosignKey,
  chainPem: string,
  rekorPublicKeyPem: string,
  rekorStart: Date,
): Promise<string> {
  const name = `root-log-${createHash("sha256")
    .update(chainPem + rekorPublicKeyPem)
    .digest("hex")
    .slice(0, 12)}`;
  writeFileSync(join(tool.dir, `${name}.chain.pem`), chainPem);
  writeFileSync(join(tool.dir, `${name}.rekor.pub`), rekorPublicKeyPem);
  await runCosign(
    [
      "trusted-root",
      "create",
      "--certificate-chain",
      `${name}.chain.pem`,
      "--rekor-key",
      `${name}.rekor.pub`,
      "--rekor-start-time",
      rekorStart.toISOString(),
      "--out",
      `${name}.json`,
    ],
    { env: tool.env, cwd: tool.dir },
  );
  return readFileSync(join(tool.dir, `${name}.json`), "utf8");
}

/**
 * Whether real `cosign verify --offline` accepts the image's `.sig` signature with its transparency-log
 * entry checked (no --insecure-ignore-tlog): against `root` (the trusted root holding the CA and
 * the Rekor key), keylessly for `identity` or with the PEM key `keyPem`. cosign 2.5 still loads the
 * Fulcio roots and the Rekor keys for this path from its TUF cache before reading --trusted-root:
 * SIGSTORE_ROOT_FILE and SIGSTORE_REKOR_PUBLIC_KEY give it the same CA chain and log key instead.
 * SCTs are not checked (no CT log exists here).
 */
export async function cosignVerifyLogged(
  tool: CosignKey,
  image: string,
  who: CosignIdentity | { keyPem: string },
  root: { json: string; chainPem: string; rekorPublicKeyPem: string },
): Promise<{ ok: true } | { ok: false; error: string }> {
  const name = `logged-${createHash("sha256").update(root.json).digest("hex").slice(0, 12)}`;
  writeFileSync(join(tool.dir, `${name}.json`), root.json);
  writeFileSync(join(tool.dir, `${name}.chain.pem`), root.chainPem);
  writeFileSync(join(tool.dir, `${name}.rekor.pub`), root.rekorPublicKeyPem);
  let identity: string[];
  if ("keyPem" in who) {
    writeFileSync(join(tool.dir, `${name}.key.pub`), who.keyPem);
    identity = ["--key", `${name}.key.pub`];
  } else
    identity =
      "issuer" in who
        ? ["--certificate-oidc-issuer", who.issuer, "--certificate-identity", who.subject]
        : [
            "--certificate-oidc-issuer-regexp",
            who.issuerRegExp,
            "--certificate-identity-regexp",
            who.subjectRegExp,
          ];
  try {
    await runCosign(
      [
        "verify",
        ...identity,
        "--trusted-root",
        `${name}.json`,
        "--offline",
        "--insecure-ignore-sct",
        "--allow-http-registry",
        image,
      ],
      {
        env: {
          ...tool.env,
          SIGSTORE_ROOT_FILE: join(tool.dir, `${name}.chain.pem`),
          SIGSTORE_REKOR_PUBLIC_KEY: join(tool.dir, `${name}.rekor.pub`),
        },
        cwd: tool.dir,
      },
    );
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/** What a cosign 3 bundle signature holds, as the log needs it. */
export interface StoredBundle {
  /** The bundle as parsed JSON (mutable: add `verificationMaterial.tlogEntries`). */
  // biome-ignore lint/suspicious/noExplicitAny: the bundle is edited loosely in tests
  bundle: Record<string, any>;
  /** The DSSE envelope's payload, signature, and the signing certificate (PEM) or undefined. */
  payload: Buffer;
  signature: Buffer;
  certificatePem?: string;
}

async function getJson(
  registryUrl: string,
  repository: string,
  kind: "manifests" | "blobs",
  ref: string,
  accept: string,
) {
  const res = await fetch(new URL(`/v2/${repository}/${kind}/${ref}`, registryUrl), {
    headers: { Accept: accept },
  });
  if (!res.ok) throw new Error(`GET ${repository} ${kind}/${ref}: HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/**
 * Rewrites the image's cosign 3 bundle referrers that carry no transparency-log entry yet (under the
 * registry's referrers fallback tag, where cosign put them) after `change` edits each bundle: how a
 * bundle cosign 2.5 wrote without a log gets the entry a logging cosign would have put in it. The
 * bundle's signature and certificate are cosign's; only verificationMaterial.tlogEntries is added.
 */
export async function rewriteBundle(
  registry: OciRegistry,
  repository: string,
  digest: string,
  change: (b: StoredBundle) => void,
): Promise<void> {
  const INDEX = "application/vnd.oci.image.index.v1+json";
  const tag = digest.replace(":", "-");
  const index = JSON.parse(
    (await getJson(registry.url, repository, "manifests", tag, INDEX)).toString("utf8"),
  );
  const rewritten = [];
  for (const entry of index.manifests) {
    const manifest = JSON.parse(
      (await getJson(registry.url, repository, "manifests", entry.digest, OCI_MANIFEST)).toString("utf8"),
    );
    const [layer] = manifest.layers;
    const bundle = JSON.parse(
      (await getJson(registry.url, repository, "blobs", layer.digest, "*/*")).toString("utf8"),
    );
    if ((bundle.verificationMaterial?.tlogEntries ?? []).length > 0) {
      rewritten.push(entry);
      continue;
    }
    const envelope = bundle.dsseEnvelope;
    const raw = bundle.verificationMaterial?.certificate?.rawBytes as string | undefined;
    change({
      bundle,
      payload: Buffer.from(envelope.payload, "base64"),
      signature: Buffer.from(envelope.signatures[0].sig, "base64"),
      ...(raw
        ? {
            certificatePem: `-----BEGIN CERTIFICATE-----\n${raw.match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`,
          }
        : {}),
    });
    const blob = Buffer.from(JSON.stringify(bundle));
    await pushBlob(registry.url, repository, sha256(blob), blob);
    manifest.layers = [{ ...layer, digest: sha256(blob), size: blob.length }];
    const manifestBytes = Buffer.from(JSON.stringify(manifest));
    const manifestDigest = await pushManifest(
      registry.url,
      repository,
      sha256(manifestBytes),
      OCI_MANIFEST,
      manifestBytes,
    );
    rewritten.push({ ...entry, digest: manifestDigest, size: manifestBytes.length });
  }
  index.manifests = rewritten;
  await pushManifest(registry.url, repository, tag, INDEX, Buffer.from(JSON.stringify(index)));
}
