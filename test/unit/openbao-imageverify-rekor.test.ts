import assert from "node:assert/strict";
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { describe, it } from "node:test";
import { canonicalJson } from "../../src/runtime/canonical-json.js";
import { bundleSignature } from "../../src/targets/openbao/imageverify/bundle.js";
import { identityPolicy } from "../../src/targets/openbao/imageverify/identity.js";
import { leafHash, rootFromPath } from "../../src/targets/openbao/imageverify/inclusion-proof.js";
import { checkKeyless } from "../../src/targets/openbao/imageverify/keyless.js";
import {
  annotationEntry,
  bodyMismatch,
  bundleEntry,
  checkLogEntries,
  type LogEntry,
  logEvidenceProblem,
  logIdOf,
  signedEntryBytes,
  type TransparencyLog,
} from "../../src/targets/openbao/imageverify/rekor.js";
import { verifySettings } from "../../src/targets/openbao/imageverify/settings.js";
import { parseTrustRoot } from "../../src/targets/openbao/imageverify/trust-root.js";
import { ImageVerifier } from "../../src/targets/openbao/imageverify/verifier.js";
import { createKeylessCa } from "../support/keyless-ca.js";
import {
  bundleTlogEntry,
  createRekorLog,
  dsseBody,
  hashedRekordBody,
  type RekorEntry,
  rekorResponse,
} from "../support/rekor-log.js";

// The transparency-log check's pure parts: RFC 8785 canonicalization (the bytes a
// SignedEntryTimestamp signs), the SET against the trusted root's Rekor keys, the entry body against
// the signature it must describe, and a keyless certificate judged at the logged time. Real cosign's
// verdicts on the same shapes are compared in integration/openbao-image-verification-tlog.

const NOW = Date.parse("2026-12-06T12:00:00Z");
const SEC = Math.floor(NOW / 1000);

function keyPair(): { pub: string; priv: KeyObject; der: Buffer } {
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    pub: publicKey.export({ format: "pem", type: "spki" }).toString(),
    priv: privateKey,
    der: publicKey.export({ format: "der", type: "spki" }),
  };
}

const rootWith = (tlogs: Record<string, unknown>[]): TransparencyLog[] =>
  parseTrustRoot(
    JSON.stringify({ mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1", tlogs }),
    "root",
  ).transparencyLogs;

/** The entry as a `.sig` layer's annotation carries it, read back. */
const asLogEntry = (e: RekorEntry): LogEntry =>
  annotationEntry(JSON.stringify(JSON.parse(rekorResponse(e, Buffer.alloc(0)))["rekorBundle"]));

describe("RFC 8785 canonical JSON", () => {
  it("sorts members by UTF-16 code units, drops whitespace, writes numbers and strings as ECMAScript does", () => {
    // RFC 8785 section 3.2.3's sorting example.
    const keys = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );
    // Read from the text: a parsed object would put the integer-like key "1" first again.
    const values = [...canonicalJson(keys).matchAll(/:"([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(values, [
      "Carriage Return",
      "One",
      "Control",
      "Latin Small Letter O With Diaeresis",
      "Euro Sign",
      "Emoji: Grinning Face",
      "Hebrew Letter Dalet With Dagesh",
    ]);
    // RFC 8785 section 3.2.2's example.
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    );
    assert.equal(
      canonicalJson(input),
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
    assert.equal(canonicalJson({ b: [1, { d: 1, c: -0 }], a: "x" }), '{"a":"x","b":[1,{"c":0,"d":1}]}');
    assert.throws(() => canonicalJson({ n: Number.NaN }), /no JSON form/);
  });

  it("gives the SET's signed bytes in Rekor's member order: body, integratedTime, logID, logIndex", () => {
    const bytes = signedEntryBytes({
      body: "Ym9keQ==",
      integratedTime: 1700000000,
      logIndex: 42,
      logId: "ab12",
    });
    assert.equal(
      bytes.toString("utf8"),
      '{"body":"Ym9keQ==","integratedTime":1700000000,"logID":"ab12","logIndex":42}',
    );
  });
});

describe("the SignedEntryTimestamp against the trusted root's Rekor keys", () => {
  const log = createRekorLog();
  const logs = rootWith([log.tlog(new Date(NOW - 3600_000))]);
  const entry = (opts?: Parameters<typeof log.enter>[2], at = SEC) =>
    asLogEntry(log.enter("Ym9keQ==", at, opts));

  it("reads the log's key and logID from trusted_root.json tlogs, the logID being sha256 of its key", () => {
    assert.equal(logs.length, 1);
    assert.equal(logs[0]!.logId, log.logId);
    assert.equal(logIdOf(logs[0]!.key), log.logId);
    assert.throws(
      () => rootWith([{ publicKey: { rawBytes: "AAAA" }, logId: { keyId: "AA==" } }]),
      /tlogs\[0\]\.publicKey\.rawBytes is not a DER public key/,
    );
    assert.throws(() => rootWith([{ ...log.tlog(), logId: {} }]), /tlogs\[0\]\.logId\.keyId is missing/);
  });

  it("accepts the log's signature over the entry, and refuses every other", () => {
    assert.equal(logEvidenceProblem(entry(), logs), undefined);
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    assert.match(logEvidenceProblem(entry({ signWith: other }), logs)!, /unable to verify SET/);
    assert.match(
      logEvidenceProblem(entry({ logId: "00".repeat(32) }), logs)!,
      /rekor log public key not found for payload/,
    );
    // Any field changed after signing: the signature no longer covers it.
    for (const change of [{ integratedTime: SEC + 1 }, { logIndex: 7 }, { body: "b3RoZXI=" }])
      assert.match(
        logEvidenceProblem({ ...entry(), ...change }, logs)!,
        /unable to verify SET/,
        JSON.stringify(change),
      );
    const { signedEntryTimestamp: _, ...none } = entry();
    assert.match(logEvidenceProblem(none, logs)!, /no SignedEntryTimestamp/);
  });

  it("refuses an entry logged outside the key's validFor range, or a key without its start", () => {
    assert.match(
      logEvidenceProblem(entry(undefined, SEC - 2 * 3600), logs)!,
      /rekor log public key not valid at payload integrated time/,
    );
    const tlog = log.tlog();
    delete ((tlog["publicKey"] as Record<string, unknown>)["validFor"] as Record<string, unknown>)["start"];
    assert.match(logEvidenceProblem(entry(), rootWith([tlog]))!, /rekor validity period start time not set/);
  });
});

describe("the entry body against the signature it must describe", () => {
  const k = keyPair();
  const payload = Buffer.from('{"critical":{}}');
  const signature = sign("sha256", payload, k.priv);
  const s = { signature, payload, verifierDer: k.der };

  it("hashedrekord 0.0.1: the same signature, key and payload hash", () => {
    assert.equal(bodyMismatch(hashedRekordBody(signature, k.pub, payload), s), undefined);
    assert.match(
      bodyMismatch(hashedRekordBody(Buffer.from("x"), k.pub, payload), s)!,
      /signature in bundle does not match signature being verified/,
    );
    assert.match(
      bodyMismatch(hashedRekordBody(signature, keyPair().pub, payload), s)!,
      /public key or certificate is not the one/,
    );
    assert.match(
      bodyMismatch(hashedRekordBody(signature, k.pub, Buffer.from("other")), s)!,
      /matching bundle to payload/,
    );
  });

  it("dsse 0.0.1: the envelope's one signature, verifier and payload hash; other kinds are named", () => {
    assert.equal(bodyMismatch(dsseBody("{}", payload, signature, k.pub), s), undefined);
    assert.match(
      bodyMismatch(dsseBody("{}", Buffer.from("x"), signature, k.pub), s)!,
      /matching bundle to payload/,
    );
    const intoto = Buffer.from(JSON.stringify({ apiVersion: "0.0.2", kind: "intoto", spec: {} })).toString(
      "base64",
    );
    assert.match(
      bodyMismatch(intoto, s)!,
      /intoto 0\.0\.2 entry; hashedrekord 0\.0\.1 and dsse 0\.0\.1 are checked/,
    );
    assert.match(bodyMismatch("bm90IGpzb24=", s)!, /not JSON/);
  });

  it("checkLogEntries: a good entry gives its integrated time; none at all is cosign's offline failure", () => {
    const log = createRekorLog();
    const logs = rootWith([log.tlog(new Date(NOW - 3600_000))]);
    const good = asLogEntry(log.enter(hashedRekordBody(signature, k.pub, payload), SEC));
    assert.deepEqual(checkLogEntries([good], s, logs), { ok: true, integratedTime: SEC * 1000 });
    assert.match((checkLogEntries([], s, logs) as { why: string }).why, /offline verification failed/);
    const foreign = asLogEntry(createRekorLog().enter(hashedRekordBody(signature, k.pub, payload), SEC));
    assert.equal(checkLogEntries([foreign, good], s, logs).ok, true, "an unknown log's entry is passed over");
    assert.match((checkLogEntries([foreign], s, logs) as { why: string }).why, /not found for payload/);
  });
});

describe("where entries are carried", () => {
  const log = createRekorLog();
  it("a .sig layer's dev.sigstore.cosign/bundle annotation, and a Sigstore bundle's tlogEntries", () => {
    const e = log.enter("Ym9keQ==", SEC);
    const fromAnnotation = annotationEntry(
      JSON.stringify(JSON.parse(rekorResponse(e, Buffer.alloc(0)))["rekorBundle"]),
    );
    assert.deepEqual(fromAnnotation, {
      body: e.body,
      integratedTime: SEC,
      logIndex: e.logIndex,
      logId: log.logId,
      signedEntryTimestamp: Buffer.from(e.signedEntryTimestamp, "base64"),
    });
    const proof = e.inclusionProof;
    const withProof = {
      ...fromAnnotation,
      inclusionProof: {
        logIndex: proof.logIndex,
        treeSize: proof.treeSize,
        rootHash: Buffer.from(proof.rootHash, "hex"),
        hashes: proof.hashes.map((h) => Buffer.from(h, "hex")),
        checkpoint: proof.checkpoint,
      },
    };
    assert.deepEqual(bundleEntry(bundleTlogEntry(e, "dsse"), "t"), withProof);
    assert.throws(() => annotationEntry('{"Payload":{}}'), /lacks Payload\.body/);
    assert.throws(
      () => bundleEntry({ canonicalizedBody: "x" }, "the bundle's tlogEntries[0]"),
      /tlogEntries\[0\] lacks/,
    );
    const bundle = {
      mediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
      verificationMaterial: { publicKey: { hint: "x" }, tlogEntries: [bundleTlogEntry(e, "dsse")] },
      dsseEnvelope: {
        payloadType: "application/vnd.in-toto+json",
        payload: "e30=",
        signatures: [{ sig: "AA==" }],
      },
    };
    assert.deepEqual(bundleSignature(Buffer.from(JSON.stringify(bundle))).logEntries(), [withProof]);
    // From bundle v0.2 an entry without its inclusion proof makes no valid bundle (sigstore-go's rule).
    const { inclusionProof: _, ...promiseOnly } = bundleTlogEntry(e, "dsse");
    bundle.verificationMaterial.tlogEntries = [promiseOnly];
    assert.throws(
      () => bundleSignature(Buffer.from(JSON.stringify(bundle))).logEntries(),
      /inclusion proof missing in bundle \(required for bundle v0\.2\)/,
    );
    bundle.mediaType = "application/vnd.dev.sigstore.bundle+json;version=0.1";
    assert.equal(bundleSignature(Buffer.from(JSON.stringify(bundle))).logEntries().length, 1);
  });
});

describe("the inclusion proof and its signed checkpoint", () => {
  it("every entry's audit path leads to the root of the tree the log signed, at every tree size", () => {
    const log = createRekorLog();
    const logs = rootWith([log.tlog(new Date(NOW - 3600_000))]);
    // Trees of 6 to 17 leaves: paths of every shape (left, right, the last leaf of an odd tree).
    for (let i = 0; i < 12; i++) {
      const e = bundleEntry(
        bundleTlogEntry(log.enter(Buffer.from(`entry ${i}`).toString("base64"), SEC), "dsse"),
        "t",
      );
      assert.equal(
        logEvidenceProblem(e, logs),
        undefined,
        `entry ${i} (tree of ${e.inclusionProof!.treeSize})`,
      );
      assert.deepEqual(
        rootFromPath(
          e.inclusionProof!.logIndex,
          e.inclusionProof!.treeSize,
          leafHash(Buffer.from(e.body, "base64")),
          e.inclusionProof!.hashes,
        ),
        e.inclusionProof!.rootHash,
      );
    }
  });

  it("refuses a broken path, a checkpoint another key signed, or one naming another tree", () => {
    const log = createRekorLog();
    const logs = rootWith([log.tlog(new Date(NOW - 3600_000))]);
    const good = bundleEntry(bundleTlogEntry(log.enter("Ym9keQ==", SEC), "dsse"), "t");
    const p = good.inclusionProof!;
    const flipped = Buffer.from(p.hashes[0]!);
    flipped[0] = flipped[0]! ^ 1;
    const broken = { ...good, inclusionProof: { ...p, hashes: [flipped, ...p.hashes.slice(1)] } };
    assert.match(logEvidenceProblem(broken, logs)!, /does not lead from the entry to its root hash/);
    const shorter = { ...good, inclusionProof: { ...p, hashes: p.hashes.slice(1) } };
    assert.match(logEvidenceProblem(shorter, logs)!, /does not lead from the entry to its root hash/);
    // The same note text, signed by another key.
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    const text = p.checkpoint.slice(0, p.checkpoint.lastIndexOf("\n\n") + 1);
    const forged = `${text}\n\u2014 rekor.test.invalid ${Buffer.concat([Buffer.alloc(4), sign("sha256", Buffer.from(text), other)]).toString("base64")}\n`;
    assert.match(
      logEvidenceProblem({ ...good, inclusionProof: { ...p, checkpoint: forged } }, logs)!,
      /checkpoint is not signed by the log's key/,
    );
    const otherSize = p.checkpoint.replace(`\n${p.treeSize}\n`, `\n${p.treeSize + 1}\n`);
    assert.match(
      logEvidenceProblem({ ...good, inclusionProof: { ...p, checkpoint: otherSize } }, logs)!,
      /proof tree size does not match signed tree head/,
    );
    assert.match(
      logEvidenceProblem({ ...good, inclusionProof: { ...p, checkpoint: "no note" } }, logs)!,
      /not a signed note/,
    );
  });
});

describe("keyless: the certificate judged when the log says it was used", () => {
  it("an expired short-lived certificate passes when logged within its validity, and not when logged after", () => {
    const ca = createKeylessCa("fulcio", new Date(NOW));
    const k = keyPair();
    const issuer = "https://issuer.example.test";
    const subject = "https://git.example.test/release.yml@refs/tags/v1";
    const cert = ca.issue({
      publicKeyPem: k.pub,
      issuer,
      subject,
      notBefore: new Date(NOW - 20 * 60_000),
      notAfter: new Date(NOW - 10 * 60_000),
    });
    const payload = Buffer.from("payload");
    const signature = sign("sha256", payload, k.priv);
    const c = {
      policy: identityPolicy({ issuer, subject }, "f")!,
      trustRoot: parseTrustRoot(ca.trustedRootJson(), "root"),
      field: "f",
      now: NOW,
    };
    assert.match(
      (checkKeyless(cert, payload, signature, c) as { why: string }).why,
      /the certificate expired at/,
    );
    assert.deepEqual(checkKeyless(cert, payload, signature, { ...c, signedAt: NOW - 15 * 60_000 }), {
      ok: true,
      notAfter: Infinity,
    });
    assert.match(
      (checkKeyless(cert, payload, signature, { ...c, signedAt: NOW - 5 * 60_000 }) as { why: string }).why,
      /certificate expired before signatures were entered in log: .* is before /,
    );
    assert.match(
      (checkKeyless(cert, payload, signature, { ...c, signedAt: NOW - 30 * 60_000 }) as { why: string }).why,
      /certificate was issued after signatures were entered in log/,
    );
  });
});

describe("which blocks check the log, and with what", () => {
  const log = createRekorLog();
  const ca = createKeylessCa("fulcio", new Date(NOW));
  const caOnly = ca.trustedRootJson();
  const withLog = JSON.stringify({ ...JSON.parse(caOnly), tlogs: [log.tlog()] });
  const configMaps = new Map<string, unknown>([
    ["ops/ca-only", { metadata: { name: "ca-only" }, data: { "trusted_root.json": caOnly } }],
    ["ops/with-log", { metadata: { name: "with-log" }, data: { "trusted_root.json": withLog } }],
  ]);
  const ctx = {
    reader: {
      get: async (_t: unknown, name: string, ns?: string) => configMaps.get(`${ns}/${name}`) as never,
    },
  };
  const key = keyPair().pub;

  it("a key-based block reads the operator's root only when it checks the log", async () => {
    const logged = await verifySettings(
      ctx,
      "ns",
      "imageVerification",
      { enabled: true, publicKey: key },
      { namespace: "ops", name: "with-log" },
    );
    assert.equal(logged.trustRoot?.transparencyLogs[0]?.logId, log.logId);
    const waived = await verifySettings(
      ctx,
      "ns",
      "imageVerification",
      { enabled: true, publicKey: key, ignoreTlog: true },
      { namespace: "ops", name: "gone" },
    );
    assert.equal(waived.trustRoot, undefined, "under ignoreTlog a key-based block never depends on the root");
  });

  it("without ignoreTlog, no root or a root without tlogs is refused before the registry is asked", async () => {
    const asked: string[] = [];
    const v = new ImageVerifier({
      fetch: async (input) => {
        asked.push(String(input));
        throw new Error("not reached");
      },
    });
    const image = "registry.example/team/openbao:2.7.2";
    await assert.rejects(
      v.verify(image, { field: "spec.imageVerification", publicKey: key, ignoreTlog: false }),
      /spec\.imageVerification\.ignoreTlog is false, so each signature must carry a transparency-log \(Rekor\) entry.*the operator has none/,
    );
    const root = parseTrustRoot(caOnly, "root");
    await assert.rejects(
      v.verify(image, {
        field: "spec.imageVerification",
        issuer: "i",
        subject: "s",
        ignoreTlog: false,
        trustRoot: root,
      }),
      /the operator's trusted root lists no tlogs to check it with/,
    );
    assert.deepEqual(asked, []);
  });
});
