import assert from "node:assert/strict";
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { OpenBaoClusterReason } from "../../src/apis/openbaocluster-names.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { type CheckContext, checkImage, operatorImage } from "../../src/targets/openbao/imageverify/check.js";
import {
  BUNDLE_ANNOTATION,
  SIGNATURE_ANNOTATION,
  SIMPLE_SIGNING_TYPE,
  signatureLayers,
  signedDigest,
} from "../../src/targets/openbao/imageverify/payload.js";
import { pullCredentials, registryOfKey } from "../../src/targets/openbao/imageverify/pull-secrets.js";
import {
  pinnedReference,
  plainHttp,
  registryReference,
  signatureTag,
} from "../../src/targets/openbao/imageverify/reference.js";
import { challengeParams } from "../../src/targets/openbao/imageverify/registry.js";
import {
  enabledVerification,
  failurePolicyOf,
  pullSecretNames,
} from "../../src/targets/openbao/imageverify/settings.js";
import {
  keyFingerprint,
  loadPublicKey,
  verifiesWith,
} from "../../src/targets/openbao/imageverify/signature.js";
import { ImageVerifier, type VerifySettings } from "../../src/targets/openbao/imageverify/verifier.js";
import type { Pass } from "../../src/targets/openbao/steps/context.js";
import { withPinnedImage } from "../../src/targets/openbao/steps/images.js";

// The pure parts of image verification, and the verifier against an in-memory registry answering
// through a fetch function (the real registry and real cosign are in the integration test).

const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const OCI = "application/vnd.oci.image.manifest.v1+json";

function keyPair(): { pub: string; priv: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { pub: publicKey.export({ format: "pem", type: "spki" }).toString(), priv: privateKey };
}

const claim = (digest: string, type = "cosign container image signature") =>
  Buffer.from(
    JSON.stringify({
      critical: {
        identity: { "docker-reference": "r.example/app" },
        image: { "docker-manifest-digest": digest },
        type,
      },
      optional: null,
    }),
  );

/** A registry in memory, served through `fetch`: manifests by tag or digest, blobs by digest. */
class FakeRegistry {
  readonly manifests = new Map<string, Buffer>();
  readonly blobs = new Map<string, Buffer>();
  readonly requests: string[] = [];
  /** When set, every call needs `Authorization: Bearer <token>`, issued for these Basic credentials. */
  auth?: { user: string; password: string; token: string };

  constructor(readonly repo: string) {}

  pushImage(tag: string, marker: string): string {
    const config = Buffer.from(JSON.stringify({ marker }));
    this.blobs.set(sha(config), config);
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI,
        config: {
          mediaType: "application/vnd.oci.image.config.v1+json",
          digest: sha(config),
          size: config.length,
        },
        layers: [],
      }),
    );
    this.manifests.set(tag, manifest);
    this.manifests.set(sha(manifest), manifest);
    return sha(manifest);
  }

  /** Signs `claimFor` (the image's own digest by default) with `priv`, as cosign lays it out. */
  signImage(digest: string, priv: KeyObject, claimFor = digest, extra: Record<string, string> = {}): void {
    const payload = claim(claimFor);
    this.blobs.set(sha(payload), payload);
    const sig = sign("sha256", payload, priv).toString("base64");
    const tag = signatureTag(digest);
    const prior = this.manifests.get(tag);
    const layers = prior ? (JSON.parse(prior.toString()) as { layers: unknown[] }).layers : [];
    layers.push({
      mediaType: SIMPLE_SIGNING_TYPE,
      digest: sha(payload),
      size: payload.length,
      annotations: { [SIGNATURE_ANNOTATION]: sig, ...extra },
    });
    this.manifests.set(tag, Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: OCI, layers })));
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    this.requests.push(url.pathname);
    const headers = new Headers(init?.headers);
    if (url.pathname === "/token") {
      const want = `Basic ${Buffer.from(`${this.auth?.user}:${this.auth?.password}`).toString("base64")}`;
      if (headers.get("authorization") !== want) return new Response("", { status: 401 });
      return Response.json({ token: this.auth?.token });
    }
    if (this.auth && headers.get("authorization") !== `Bearer ${this.auth.token}`)
      return new Response("", {
        status: 401,
        headers: {
          "WWW-Authenticate": `Bearer realm="https://${url.host}/token",service="fake",scope="repository:${this.repo}:pull"`,
        },
      });
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url.pathname);
    if (!m || m[1] !== this.repo) return new Response("", { status: 404 });
    const body = m[2] === "manifests" ? this.manifests.get(m[3]!) : this.blobs.get(m[3]!);
    return body ? new Response(new Uint8Array(body), { status: 200 }) : new Response("", { status: 404 });
  };
}

const settings = (publicKey: string, extra: Partial<VerifySettings> = {}): VerifySettings => ({
  field: "spec.imageVerification",
  publicKey,
  ignoreTlog: true,
  ...extra,
});

describe("image references for the registry API", () => {
  it("splits registry, repository, tag and digest the way Docker does", () => {
    assert.deepEqual(registryReference("openbao/openbao:2.4.4"), {
      host: "registry-1.docker.io",
      repository: "openbao/openbao",
      name: "openbao/openbao",
      tag: "2.4.4",
    });
    assert.equal((registryReference("alpine") as { repository: string }).repository, "library/alpine");
    const d = `sha256:${"a".repeat(64)}`;
    assert.deepEqual(registryReference(`127.0.0.1:5000/team/app:1.0@${d}`), {
      host: "127.0.0.1:5000",
      repository: "team/app",
      name: "127.0.0.1:5000/team/app",
      tag: "1.0",
      digest: d,
    });
    assert.equal((registryReference("localhost/app") as { host: string }).host, "localhost");
    assert.match(String(registryReference("Bad Name")), /without spaces|not a valid/);
  });

  it("speaks plain HTTP to loopback registries only", () => {
    assert.equal(plainHttp("127.0.0.1:5000"), true);
    assert.equal(plainHttp("localhost:5000"), true);
    assert.equal(plainHttp("[::1]:5000"), true);
    assert.equal(plainHttp("quay.io"), false);
    assert.equal(plainHttp("127.example.com"), false);
  });

  it("pins a reference by digest without its tag, and names cosign's signature tag", () => {
    const ref = registryReference("quay.io/openbao/openbao:2.4.4");
    assert.ok(typeof ref !== "string");
    assert.equal(
      pinnedReference(ref, `sha256:${"b".repeat(64)}`),
      `quay.io/openbao/openbao@sha256:${"b".repeat(64)}`,
    );
    assert.equal(signatureTag(`sha256:${"c".repeat(64)}`), `sha256-${"c".repeat(64)}.sig`);
  });
});

describe("cosign signature artifacts", () => {
  it("reads the simple-signing layers and their annotations, skipping other layers", () => {
    const d = `sha256:${"d".repeat(64)}`;
    const layers = signatureLayers(
      Buffer.from(
        JSON.stringify({
          layers: [
            { mediaType: "application/octet-stream", digest: d, size: 1 },
            {
              mediaType: SIMPLE_SIGNING_TYPE,
              digest: d,
              size: 200,
              annotations: {
                [SIGNATURE_ANNOTATION]: Buffer.from("sig").toString("base64"),
                [BUNDLE_ANNOTATION]: "{}",
              },
            },
            {
              mediaType: SIMPLE_SIGNING_TYPE,
              digest: "sha256:short",
              annotations: { [SIGNATURE_ANNOTATION]: "x" },
            },
          ],
        }),
      ),
    );
    assert.equal(layers.length, 1);
    assert.equal(layers[0]!.digest, d);
    assert.equal(layers[0]!.signature.toString(), "sig");
    assert.equal(layers[0]!.bundle, "{}");
    assert.throws(() => signatureLayers(Buffer.from("not json")), /not JSON/);
    assert.throws(() => signatureLayers(Buffer.from("{}")), /no layers/);
  });

  it("takes the digest a payload claims, and refuses what is not a cosign image claim", () => {
    const d = `sha256:${"e".repeat(64)}`;
    assert.equal(signedDigest(claim(d)), d);
    assert.throws(() => signedDigest(claim(d, "something else")), /type is not/);
    assert.throws(() => signedDigest(Buffer.from(JSON.stringify({ critical: { type: "x" } }))), /type/);
    assert.throws(
      () =>
        signedDigest(
          Buffer.from(JSON.stringify({ critical: { type: "cosign container image signature", image: {} } })),
        ),
      /no docker-manifest-digest/,
    );
    assert.throws(() => signedDigest(Buffer.from("[")), /not JSON/);
  });

  it("verifies ECDSA and Ed25519 signatures with the right key only", () => {
    const a = keyPair();
    const b = keyPair();
    const payload = claim(`sha256:${"f".repeat(64)}`);
    const sig = sign("sha256", payload, a.priv);
    assert.equal(verifiesWith(loadPublicKey(a.pub, "k"), payload, sig), true);
    assert.equal(verifiesWith(loadPublicKey(b.pub, "k"), payload, sig), false);
    assert.equal(
      verifiesWith(loadPublicKey(a.pub, "k"), Buffer.concat([payload, Buffer.from(" ")]), sig),
      false,
    );
    assert.equal(verifiesWith(loadPublicKey(a.pub, "k"), payload, Buffer.from("not der")), false);
    const ed = generateKeyPairSync("ed25519");
    const edPub = loadPublicKey(ed.publicKey.export({ format: "pem", type: "spki" }).toString(), "k");
    assert.equal(verifiesWith(edPub, payload, sign(null, payload, ed.privateKey)), true);
    assert.notEqual(keyFingerprint(loadPublicKey(a.pub, "k")), keyFingerprint(loadPublicKey(b.pub, "k")));
    assert.throws(
      () => loadPublicKey("-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----", "spec.x.publicKey"),
      /spec\.x\.publicKey is not a PEM public key/,
    );
  });
});

describe("pull Secrets as registry credentials", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  it("reads dockerconfigjson and dockercfg, auth or username/password, a later Secret winning", () => {
    const creds = pullCredentials([
      {
        name: "one",
        type: "kubernetes.io/dockerconfigjson",
        data: {
          ".dockerconfigjson": b64(
            JSON.stringify({
              auths: {
                "https://index.docker.io/v1/": { auth: b64("hub:pw:with:colons") },
                "quay.io": { username: "q", password: "old" },
              },
            }),
          ),
        },
      },
      {
        name: "two",
        type: "kubernetes.io/dockercfg",
        data: { ".dockercfg": b64(JSON.stringify({ "quay.io": { username: "q", password: "new" } })) },
      },
    ]);
    assert.deepEqual(creds.get("registry-1.docker.io"), { username: "hub", password: "pw:with:colons" });
    assert.deepEqual(creds.get("quay.io"), { username: "q", password: "new" });
    assert.equal(registryOfKey("https://ghcr.io/v2/"), "ghcr.io");
  });

  it("refuses a Secret that is not a pull Secret, naming it and not its content", () => {
    assert.throws(
      () => pullCredentials([{ name: "opaque", type: "Opaque", data: { x: b64("secret-value") } }]),
      (e: Error) => /Secret opaque has type Opaque/.test(e.message) && !e.message.includes("secret-value"),
    );
    assert.throws(
      () => pullCredentials([{ name: "empty", type: "kubernetes.io/dockerconfigjson", data: {} }]),
      /Secret empty has no \.dockerconfigjson key/,
    );
  });

  it("parses a Bearer challenge", () => {
    assert.deepEqual(
      challengeParams('Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull"'),
      {
        realm: "https://auth.example/token",
        service: "reg",
        scope: "repository:a/b:pull",
      },
    );
  });
});

describe("the image verifier against a registry", () => {
  const HOST = "registry.example";
  const image = (tag: string) => `${HOST}/team/openbao:${tag}`;

  it("verifies a signed image, pins its digest, and answers the next call from the cache", async () => {
    const reg = new FakeRegistry("team/openbao");
    const key = keyPair();
    const digest = reg.pushImage("2.4.4", "a");
    reg.signImage(digest, key.priv);
    const v = new ImageVerifier({ fetch: reg.fetch });
    const first = await v.verify(image("2.4.4"), settings(key.pub));
    assert.deepEqual(first, { digest, pinned: `${HOST}/team/openbao@${digest}`, cached: false });
    const asked = reg.requests.length;
    assert.ok(asked >= 3, "manifest, signature manifest and payload were fetched");
    const second = await v.verify(image("2.4.4"), settings(key.pub));
    assert.equal(second.cached, true);
    assert.equal(reg.requests.length, asked, "a cached verification asks the registry nothing");
  });

  it("looks a tag up again once its time in the cache is over, and then sees it moved", async () => {
    const reg = new FakeRegistry("team/openbao");
    const key = keyPair();
    let now = 0;
    const v = new ImageVerifier({ fetch: reg.fetch, now: () => now, tagTtlMs: 1000 });
    reg.signImage(reg.pushImage("2.4.4", "a"), key.priv);
    await v.verify(image("2.4.4"), settings(key.pub));
    reg.pushImage("2.4.4", "moved, unsigned");
    now = 500;
    assert.equal((await v.verify(image("2.4.4"), settings(key.pub))).cached, true);
    now = 1500;
    await assert.rejects(
      v.verify(image("2.4.4"), settings(key.pub)),
      /is not signed: no sha256-[0-9a-f]{64}\.sig/,
    );
  });

  it("keeps a tag's last verified digest while the registry does not answer, and only then", async () => {
    const reg = new FakeRegistry("team/openbao");
    const key = keyPair();
    let now = 0;
    let down = false;
    const fetch: typeof reg.fetch = async (input, init) => {
      if (down) throw Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
      return reg.fetch(input, init);
    };
    const v = new ImageVerifier({ fetch, now: () => now, tagTtlMs: 1000 });
    const digest = reg.pushImage("2.4.4", "a");
    reg.signImage(digest, key.priv);
    await v.verify(image("2.4.4"), settings(key.pub));
    now = 5000;
    down = true;
    assert.deepEqual(await v.verify(image("2.4.4"), settings(key.pub)), {
      digest,
      pinned: `${HOST}/team/openbao@${digest}`,
      cached: true,
    });
    // Never verified: an outage is a failure, said to be transient.
    await assert.rejects(
      v.verify(image("2.5.0"), settings(key.pub)),
      (e: Error & { transient?: boolean }) => e.transient === true,
    );
  });

  it("refuses an unsigned image, a wrong key, and a signature copied from another image", async () => {
    const reg = new FakeRegistry("team/openbao");
    const key = keyPair();
    const other = keyPair();
    const unsigned = reg.pushImage("unsigned", "u");
    const v = new ImageVerifier({ fetch: reg.fetch });
    await assert.rejects(
      v.verify(image("unsigned"), settings(key.pub)),
      new RegExp(`image ${HOST}/team/openbao:unsigned \\(${unsigned}\\) is not signed`),
    );
    reg.signImage(reg.pushImage("wrongkey", "w"), other.priv);
    await assert.rejects(
      v.verify(image("wrongkey"), settings(key.pub)),
      /no signature verifies with spec\.imageVerification\.publicKey \(1 checked\)/,
    );
    // A genuine signature, but over another image's digest, stored under this image's signature tag.
    const signed = reg.pushImage("signed", "s");
    const copy = reg.pushImage("copy", "c");
    reg.signImage(copy, key.priv, signed);
    await assert.rejects(
      v.verify(image("copy"), settings(key.pub)),
      new RegExp(`covers another image \\(${signed}\\)`),
    );
    await assert.rejects(v.verify(image("absent"), settings(key.pub)), /has no manifest/);
  });

  it("takes the one good signature among several", async () => {
    const reg = new FakeRegistry("team/openbao");
    const key = keyPair();
    const digest = reg.pushImage("2.4.4", "a");
    reg.signImage(digest, keyPair().priv);
    reg.signImage(digest, key.priv);
    assert.equal(
      (await new ImageVerifier({ fetch: reg.fetch }).verify(image("2.4.4"), settings(key.pub))).digest,
      digest,
    );
  });

  it("refuses what it cannot check instead of checking less: half a keyless identity, the transparency log", async () => {
    const reg = new FakeRegistry("team/openbao");
    const v = new ImageVerifier({ fetch: reg.fetch });
    const keyless: VerifySettings = {
      field: "spec.operatorImageVerification",
      issuer: "https://token.actions.githubusercontent.com",
      subjectRegExp: "^https://github.com/openbao/",
      ignoreTlog: false,
    };
    // issuer with subjectRegExp is no pair upstream takes (exact pair or RegExp pair): refused.
    await assert.rejects(
      v.verify(image("x"), keyless),
      /spec\.operatorImageVerification: enabled without publicKey, or issuer and subject, or issuerRegExp and subjectRegExp/,
    );
    await assert.rejects(
      v.verify(image("x"), settings(keyPair().pub, { ignoreTlog: false })),
      /spec\.imageVerification\.ignoreTlog is false/,
    );
    await assert.rejects(
      v.verify(image("x"), { field: "spec.imageVerification", ignoreTlog: true }),
      /without publicKey/,
    );
    assert.deepEqual(reg.requests, [], "nothing was asked of the registry");
  });

  it("logs in with the pull Secret's credentials through the registry's token service", async () => {
    const reg = new FakeRegistry("team/openbao");
    reg.auth = { user: "robot", password: "pull-password", token: "t0k" };
    const key = keyPair();
    reg.signImage(reg.pushImage("2.4.4", "a"), key.priv);
    const v = new ImageVerifier({ fetch: reg.fetch });
    await assert.rejects(v.verify(image("2.4.4"), settings(key.pub)), (e: Error) =>
      /HTTP 401 \(the registry wants credentials/.test(e.message),
    );
    const credentials = new Map([[HOST, { username: "robot", password: "pull-password" }]]);
    const ok = await v.verify(image("2.4.4"), settings(key.pub, { credentials }));
    assert.equal(ok.cached, false);
    const wrong = new Map([[HOST, { username: "robot", password: "wrong-password" }]]);
    await assert.rejects(
      v.verify(image("2.4.4"), settings(key.pub, { credentials: wrong })),
      (e: Error) => /token: HTTP 401/.test(e.message) && !e.message.includes("wrong-password"),
    );
  });

  it("says a registry that does not answer is a transient failure", async () => {
    const v = new ImageVerifier({
      fetch: async () => {
        throw Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
      },
    });
    await assert.rejects(
      v.verify(image("2.4.4"), settings(keyPair().pub)),
      (e: Error & { transient?: boolean }) =>
        e.transient === true && /did not answer \(ECONNREFUSED\)/.test(e.message),
    );
  });
});

describe("failure policy and spec settings", () => {
  const HOST = "registry.example";
  const cluster = (spec: Record<string, unknown>) =>
    ({
      metadata: { name: "bao", namespace: "ns" },
      spec: { version: "2.4.4", storage: { size: "1Gi" }, ...spec },
    }) as unknown as OpenBaoCluster;
  const recorded: { type: string; reason: string; note: string }[] = [];
  const secrets = new Map<string, KubeObject>();
  const ctx = {
    reader: { get: async (_t: unknown, name: string) => secrets.get(name) },
    events: {
      record: (_o: unknown, e: { type: string; reason: string; note: string }) => void recorded.push(e),
    },
  } as unknown as CheckContext;
  const input = {
    field: "imageVerification" as const,
    image: `${HOST}/team/openbao:2.4.4`,
    reason: OpenBaoClusterReason.ImageVerificationFailed,
    what: "OpenBao image",
  };

  it("reads the blocks tolerantly: off unless enabled, Block unless Warn, empty names name nothing", () => {
    assert.equal(enabledVerification({}, "imageVerification"), undefined);
    assert.equal(
      enabledVerification({ imageVerification: { enabled: false } }, "imageVerification"),
      undefined,
    );
    assert.equal(enabledVerification({ imageVerification: "x" }, "imageVerification"), undefined);
    const v = enabledVerification(
      { operatorImageVerification: { enabled: true, subjectRegExp: "^x" } },
      "operatorImageVerification",
    );
    assert.equal(v?.subjectRegExp, "^x");
    assert.equal(failurePolicyOf({}), "Block");
    assert.equal(failurePolicyOf({ failurePolicy: "Warn" }), "Warn");
    assert.deepEqual(pullSecretNames({ imagePullSecrets: [{ name: "" }, { name: "a" }, {}] }), ["a"]);
  });

  it("skips a disabled block, pins a verified image, blocks or warns on failure with the reason", async () => {
    const reg = new FakeRegistry("team/openbao");
    const key = keyPair();
    const digest = reg.pushImage("2.4.4", "a");
    const v = new ImageVerifier({ fetch: reg.fetch });
    assert.deepEqual(await checkImage(v, ctx, cluster({}), input), { kind: "skipped", image: input.image });
    const block = { enabled: true, publicKey: key.pub, ignoreTlog: true };
    const blocked = await checkImage(v, ctx, cluster({ imageVerification: block }), input);
    assert.equal(blocked.kind, "blocked");
    assert.equal((blocked as { reason: string }).reason, "ImageVerificationFailed");
    assert.match(
      (blocked as { message: string }).message,
      /^OpenBao image registry\.example\/team\/openbao:2\.4\.4 failed verification: .*is not signed/,
    );
    assert.equal(recorded.length, 0, "Block says it in the condition, not in an event");
    const warned = await checkImage(
      v,
      ctx,
      cluster({ imageVerification: { ...block, failurePolicy: "Warn" } }),
      input,
    );
    assert.deepEqual(warned.kind, "warned");
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.type, "Warning");
    assert.equal(recorded[0]!.reason, "ImageVerificationFailed");
    assert.match(recorded[0]!.note, /failurePolicy is Warn/);
    reg.signImage(digest, key.priv);
    assert.deepEqual(await checkImage(v, ctx, cluster({ imageVerification: block }), input), {
      kind: "pinned",
      image: `${HOST}/team/openbao@${digest}`,
      cached: false,
    });
  });

  it("operator images follow operatorImageVerification only, never imageVerification", async () => {
    const reg = new FakeRegistry("team/openbao");
    const v = new ImageVerifier({ fetch: reg.fetch });
    const on = { enabled: true, publicKey: keyPair().pub, ignoreTlog: true };
    const image = `${HOST}/team/openbao:2.4.4`;
    assert.deepEqual(
      await operatorImage(
        v,
        ctx,
        cluster({ imageVerification: on }),
        image,
        OpenBaoClusterReason.BackupExecutorImageVerificationFailed,
        "executor image",
      ),
      {
        ok: true,
        image,
      },
    );
    const refused = await operatorImage(
      v,
      ctx,
      cluster({ operatorImageVerification: on }),
      image,
      OpenBaoClusterReason.BackupExecutorImageVerificationFailed,
      "executor image",
    );
    assert.equal(refused.ok, false);
    assert.match(
      (refused as { message: string }).message,
      /^executor image .* failed verification: .*has no manifest/,
    );
  });

  it("names a pull Secret that is missing or not one, by the field it is listed in", async () => {
    const v = new ImageVerifier({ fetch: new FakeRegistry("x").fetch });
    const on = {
      enabled: true,
      publicKey: keyPair().pub,
      ignoreTlog: true,
      imagePullSecrets: [{ name: "pull" }],
    };
    const missing = await checkImage(v, ctx, cluster({ imageVerification: on }), input);
    assert.match(
      (missing as { message: string }).message,
      /spec\.imageVerification\.imagePullSecrets: Secret pull does not exist/,
    );
    secrets.set("pull", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "pull" },
      type: "Opaque",
      data: { a: "c2VjcmV0" },
    } as KubeObject);
    const wrong = await checkImage(v, ctx, cluster({ imageVerification: on }), input);
    assert.match(
      (wrong as { message: string }).message,
      /spec\.imageVerification\.imagePullSecrets: Secret pull has type Opaque/,
    );
  });

  it("pins a StatefulSet's OpenBao container to the verified digest, and leaves other images alone", () => {
    const sts = {
      spec: {
        template: {
          spec: {
            containers: [
              { name: "openbao", image: "a:1" },
              { name: "x", image: "a:1" },
            ],
          },
        },
      },
    };
    const pinned = withPinnedImage(
      { pinnedImages: new Map([["a:1", "a@sha256:1"]]) } as unknown as Pass,
      sts,
    );
    const containers = (pinned["spec"] as typeof sts.spec).template.spec.containers;
    assert.deepEqual(
      containers.map((c) => c.image),
      ["a@sha256:1", "a:1"],
    );
    assert.equal(withPinnedImage({} as Pass, sts), sts);
    assert.equal(
      withPinnedImage({ pinnedImages: new Map([["b:1", "b@sha256:2"]]) } as unknown as Pass, sts),
      sts,
    );
  });
});
