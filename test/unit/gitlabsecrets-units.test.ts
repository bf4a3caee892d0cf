import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
  X509Certificate,
} from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import type { GitLabSecretsSpec } from "../../src/apis/gitlabsecrets.js";
import { GitLabSecretsReason } from "../../src/apis/gitlabsecrets-names.js";
import { cryptoSources } from "../../src/targets/gitlab/secrets/generate.js";
import { type ObservedSecret, planSecrets } from "../../src/targets/gitlab/secrets/plan.js";
import { opensshPrivateKey } from "../../src/targets/gitlab/secrets/ssh.js";
import { issueCertificate } from "../../src/targets/gitlab/secrets/x509.js";

// The generators that make several keys (x509, sshHostKeys) or edit secrets.yml (railsSecrets),
// checked by parsing what they produce with node's crypto, a YAML parser and, where the machine
// has it, ssh-keygen itself.

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const text = (v: string | undefined) => Buffer.from(v ?? "", "base64").toString("utf8");
const DAY = 86_400_000;

function plan(
  spec: GitLabSecretsSpec,
  observed: Record<string, ObservedSecret> = {},
  recorded: Record<string, string[]> = {},
  now = new Date("2026-12-06T12:00:00Z"),
) {
  return planSecrets({
    spec,
    labels: { app: "gitlab" },
    // Read as already labelled: only data changes are planned.
    observed: new Map(Object.entries(observed).map(([k, v]) => [k, { labels: { app: "gitlab" }, ...v }])),
    recorded: new Map(Object.entries(recorded)),
    sources: cryptoSources,
    now,
  });
}

/** The chart's registry token pair: `openssl req -x509 -newkey rsa:4096 -subj /CN=... -days 3650`. */
const registry: GitLabSecretsSpec = {
  secrets: [
    {
      name: "gl-registry-secret",
      generators: [
        {
          type: "x509",
          commonName: "gitlab-issuer",
          bits: 2048,
          days: 3650,
          certKey: "registry-auth.crt",
          keyKey: "registry-auth.key",
        },
      ],
    },
  ],
};

describe("x509 generator", () => {
  it("writes a self-signed certificate of the spec's subject, size and validity, and its PKCS#8 key", async () => {
    const now = new Date("2026-12-06T12:00:00Z");
    const p = await plan(registry, {}, {}, now);
    assert.equal(p.reason, GitLabSecretsReason.SecretsReady, p.message);
    const data = p.writes[0]!.data;
    const keyPem = text(data["registry-auth.key"]);
    assert.match(keyPem, /^-----BEGIN PRIVATE KEY-----\n/);
    const key = createPrivateKey(keyPem);
    assert.equal(key.asymmetricKeyDetails?.modulusLength, 2048);
    const cert = new X509Certificate(text(data["registry-auth.crt"]));
    assert.equal(cert.subject, "CN=gitlab-issuer");
    assert.equal(cert.issuer, "CN=gitlab-issuer");
    assert.ok(cert.checkPrivateKey(key), "the certificate certifies the stored key");
    assert.ok(cert.verify(cert.publicKey), "self-signed: its own key verifies its signature");
    assert.ok(cert.ca, "CA:TRUE, as openssl req -x509 marks it");
    assert.equal(Date.parse(cert.validFrom), now.getTime());
    assert.equal(Date.parse(cert.validTo) - Date.parse(cert.validFrom), 3650 * DAY);
  });

  it("derives a missing certificate from the stored key, reports a certificate without its key", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const derived = await plan(registry, {
      "gl-registry-secret": { resourceVersion: "5", data: { "registry-auth.key": b64(keyPem) } },
    });
    const w = derived.writes[0]!;
    assert.equal(w.op, "patch");
    assert.deepEqual(
      Object.keys(w.data),
      ["registry-auth.crt"],
      "the key is kept, only the certificate added",
    );
    assert.ok(new X509Certificate(text(w.data["registry-auth.crt"])).checkPrivateKey(privateKey));

    const orphan = await plan(registry, {
      "gl-registry-secret": { resourceVersion: "5", data: { "registry-auth.crt": b64("x") } },
    });
    assert.deepEqual(orphan.writes, []);
    assert.equal(orphan.reason, GitLabSecretsReason.SecretsReported);
    assert.match(
      orphan.message,
      /gl-registry-secret: registry-auth.crt\/registry-auth.key: the certificate is present without its key/,
    );
    assert.deepEqual(orphan.statuses, [{ name: "gl-registry-secret", ready: false }]);
  });

  it("a pair that exists is never touched", async () => {
    const first = await plan(registry);
    const stored = { resourceVersion: "1", data: first.writes[0]!.data, labels: { app: "gitlab" } };
    const again = await plan(registry, { "gl-registry-secret": stored });
    assert.deepEqual(again.writes, []);
    assert.equal(again.reason, GitLabSecretsReason.SecretsReady);
  });

  it("a CA-signed certificate names its SANs and verifies against the authority", () => {
    const ca = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const now = new Date();
    const caPem = issueCertificate({
      subject: {
        commonName: "GitLab Helm Chart",
        organization: "GitLab",
        organizationalUnit: "Cloud Native",
      },
      key: ca,
      ca: true,
      notBefore: now,
      days: 3650,
    });
    const leafKey = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey;
    const leafPem = issueCertificate({
      subject: { commonName: "*.example.com" },
      key: leafKey,
      issuer: { certPem: caPem, key: ca },
      ca: false,
      dnsNames: ["*.example.com", "example.com"],
      notBefore: now,
      days: 365,
    });
    const caCert = new X509Certificate(caPem);
    const leaf = new X509Certificate(leafPem);
    assert.equal(caCert.subject, "O=GitLab\nOU=Cloud Native\nCN=GitLab Helm Chart");
    assert.ok(leaf.verify(caCert.publicKey), "signed by the authority");
    assert.ok(leaf.checkIssued(caCert), "issuer and key identifiers chain to the authority");
    assert.ok(!leaf.verify(leaf.publicKey), "not self-signed");
    assert.ok(leaf.checkPrivateKey(leafKey));
    assert.equal(leaf.subjectAltName, "DNS:*.example.com, DNS:example.com");
    assert.ok(leaf.checkHost("gitlab.example.com"));
    assert.ok(!leaf.ca);
  });
});

// ---- sshHostKeys ------------------------------------------------------------------------------

const hostKeys: GitLabSecretsSpec = {
  secrets: [{ name: "gl-gitlab-shell-host-keys", generators: [{ type: "sshHostKeys" }] }],
};
const TYPES = ["rsa", "ecdsa", "ed25519"] as const;

/** An RFC 4251 reader, written apart from the code under test. */
class Reader {
  at = 0;
  constructor(readonly buf: Buffer) {}
  u32() {
    const v = this.buf.readUInt32BE(this.at);
    this.at += 4;
    return v;
  }
  bytes() {
    const n = this.u32();
    const v = this.buf.subarray(this.at, this.at + n);
    assert.equal(v.length, n, "string runs past the end");
    this.at += n;
    return v;
  }
  string() {
    return this.bytes().toString("latin1");
  }
}

const unsigned = (b: Buffer) => (b[0] === 0 ? b.subarray(1) : b).toString("base64url");

/** The private key an openssh-key-v1 file holds, as a node key, and the public blob of its header. */
function readOpenSsh(pem: string): { key: KeyObject; headerBlob: Buffer; type: string } {
  const m = /^-----BEGIN OPENSSH PRIVATE KEY-----\n([\s\S]+)\n-----END OPENSSH PRIVATE KEY-----\n$/.exec(pem);
  assert.ok(m, "OpenSSH PEM armour");
  for (const line of m[1]!.split("\n")) assert.ok(line.length <= 70, "lines of at most 70 columns");
  const buf = Buffer.from(m[1]!.replace(/\n/g, ""), "base64");
  assert.equal(buf.subarray(0, 15).toString("latin1"), "openssh-key-v1\0");
  const r = new Reader(buf);
  r.at = 15;
  assert.equal(r.string(), "none");
  assert.equal(r.string(), "none");
  assert.equal(r.string(), "");
  assert.equal(r.u32(), 1);
  const headerBlob = r.bytes();
  const section = new Reader(r.bytes());
  assert.equal(section.buf.length % 8, 0, "private section padded to 8");
  assert.equal(section.u32(), section.u32(), "check integers match");
  const type = section.string();
  let jwk: Record<string, string>;
  if (type === "ssh-rsa") {
    const [n, e, d, qi, p, q] = [0, 1, 2, 3, 4, 5].map(() => section.bytes());
    const big = (b: Buffer) => BigInt(`0x${b.toString("hex") || "0"}`);
    const bytes = (v: bigint) => {
      const hex = v.toString(16);
      return Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex");
    };
    // OpenSSH stores no CRT exponents; node's JWK import needs them.
    const dp = bytes(big(d!) % (big(p!) - 1n));
    const dq = bytes(big(d!) % (big(q!) - 1n));
    jwk = {
      kty: "RSA",
      n: unsigned(n!),
      e: unsigned(e!),
      d: unsigned(d!),
      p: unsigned(p!),
      q: unsigned(q!),
      dp: unsigned(dp),
      dq: unsigned(dq),
      qi: unsigned(qi!),
    };
  } else if (type === "ecdsa-sha2-nistp256") {
    assert.equal(section.string(), "nistp256");
    const q = section.bytes();
    const d = section.bytes();
    jwk = {
      kty: "EC",
      crv: "P-256",
      x: q.subarray(1, 33).toString("base64url"),
      y: q.subarray(33).toString("base64url"),
      d: unsigned(d),
    };
  } else {
    assert.equal(type, "ssh-ed25519");
    const pub = section.bytes();
    const secret = section.bytes();
    assert.equal(secret.length, 64);
    assert.ok(secret.subarray(32).equals(pub), "the secret ends with the public key");
    jwk = {
      kty: "OKP",
      crv: "Ed25519",
      x: pub.toString("base64url"),
      d: secret.subarray(0, 32).toString("base64url"),
    };
  }
  section.string(); // comment
  return { key: createPrivateKey({ key: jwk, format: "jwk" } as never), headerBlob, type };
}

/** A node public key from an authorized_keys line. */
function readPublicLine(line: string): { key: KeyObject; blob: Buffer; type: string } {
  assert.match(line, /^\S+ [A-Za-z0-9+/=]+\n$/);
  const [type, b] = line.trim().split(" ");
  const blob = Buffer.from(b!, "base64");
  const r = new Reader(blob);
  assert.equal(r.string(), type);
  let jwk: Record<string, string>;
  if (type === "ssh-rsa") {
    const e = r.bytes();
    const n = r.bytes();
    jwk = { kty: "RSA", e: unsigned(e), n: unsigned(n) };
  } else if (type === "ecdsa-sha2-nistp256") {
    assert.equal(r.string(), "nistp256");
    const q = r.bytes();
    jwk = {
      kty: "EC",
      crv: "P-256",
      x: q.subarray(1, 33).toString("base64url"),
      y: q.subarray(33).toString("base64url"),
    };
  } else jwk = { kty: "OKP", crv: "Ed25519", x: r.bytes().toString("base64url") };
  return { key: createPublicKey({ key: jwk, format: "jwk" } as never), blob, type: type! };
}

const hasSshKeygen = (() => {
  try {
    execFileSync("ssh-keygen", ["-?"], { stdio: "ignore" });
    return true;
  } catch (e) {
    return (e as { status?: number }).status !== undefined; // ran, and printed its usage
  }
})();

describe("sshHostKeys generator", () => {
  it("writes the pairs ssh-keygen -A makes: RSA 3072, ECDSA P-256, Ed25519; each public key matches its private key", async () => {
    const p = await plan(hostKeys);
    assert.equal(p.reason, GitLabSecretsReason.SecretsReady, p.message);
    const data = p.writes[0]!.data;
    assert.deepEqual(
      Object.keys(data).sort(),
      TYPES.flatMap((t) => [`ssh_host_${t}_key`, `ssh_host_${t}_key.pub`]).sort(),
    );
    const dir = mkdtempSync(join(tmpdir(), "hostkeys-"));
    try {
      for (const t of TYPES) {
        const privText = text(data[`ssh_host_${t}_key`]);
        const pubText = text(data[`ssh_host_${t}_key.pub`]);
        const priv = readOpenSsh(privText);
        const pub = readPublicLine(pubText);
        assert.ok(priv.headerBlob.equals(pub.blob), `${t}: the file's public blob is the .pub's`);
        assert.equal(priv.type, pub.type);
        const message = Buffer.from(`host key check ${t}`);
        const alg = t === "ed25519" ? null : "sha256";
        assert.ok(
          verify(alg, message, pub.key, sign(alg, message, priv.key)),
          `${t}: .pub verifies the private key's signature`,
        );
        if (t === "rsa") assert.equal(priv.key.asymmetricKeyDetails?.modulusLength, 3072);
        if (t === "ecdsa") assert.equal(priv.key.asymmetricKeyDetails?.namedCurve, "prime256v1");
        if (hasSshKeygen) {
          const file = join(dir, t);
          writeFileSync(file, privText, { mode: 0o600 });
          const derived = execFileSync("ssh-keygen", ["-y", "-f", file])
            .toString()
            .trim()
            .split(" ")
            .slice(0, 2)
            .join(" ");
          assert.equal(
            derived,
            pubText.trim(),
            `${t}: ssh-keygen reads the private key and derives the same public key`,
          );
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("derives a missing .pub from the private key, reports a .pub without its private key", async () => {
    const key = generateKeyPairSync("ed25519").privateKey;
    const pem = opensshPrivateKey(key);
    const legacy = generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey;
    const legacyPem = legacy.export({ type: "sec1", format: "pem" }).toString(); // older ssh-keygen's PEM
    const full = (await plan(hostKeys)).writes[0]!.data;
    const observed: ObservedSecret = {
      resourceVersion: "3",
      data: {
        ...full,
        ssh_host_ed25519_key: b64(pem),
        ssh_host_ecdsa_key: b64(legacyPem),
        "ssh_host_rsa_key.pub": full["ssh_host_rsa_key.pub"]!,
      },
    };
    delete observed.data!["ssh_host_ed25519_key.pub"];
    delete observed.data!["ssh_host_ecdsa_key.pub"];
    delete observed.data!["ssh_host_rsa_key"];
    const p = await plan(hostKeys, { "gl-gitlab-shell-host-keys": observed });
    const w = p.writes[0]!;
    assert.deepEqual(Object.keys(w.data).sort(), ["ssh_host_ecdsa_key.pub", "ssh_host_ed25519_key.pub"]);
    for (const [t, k] of [
      ["ed25519", key],
      ["ecdsa", legacy],
    ] as const) {
      const pub = readPublicLine(text(w.data[`ssh_host_${t}_key.pub`]));
      const m = Buffer.from("x");
      const alg = t === "ed25519" ? null : "sha256";
      assert.ok(verify(alg, m, pub.key, sign(alg, m, k)), `${t}: the derived .pub is the stored key's`);
    }
    assert.equal(p.reason, GitLabSecretsReason.SecretsReported);
    assert.match(p.message, /gl-gitlab-shell-host-keys: ssh_host_rsa_key: only the public key is present/);
    assert.doesNotMatch(p.message, /BEGIN|AAAA/, "no key material in the message");
  });

  it("a pair recorded ready that is gone is reported, never generated again; the others stay", async () => {
    const first = await plan(hostKeys);
    assert.deepEqual(
      first.statuses[0]!.readyUnits,
      TYPES.map((t) => `ssh_host_${t}_key`),
    );
    const data = { ...first.writes[0]!.data };
    delete data["ssh_host_rsa_key"];
    delete data["ssh_host_rsa_key.pub"];
    const p = await plan(
      hostKeys,
      { "gl-gitlab-shell-host-keys": { resourceVersion: "9", data } },
      { "gl-gitlab-shell-host-keys": first.statuses[0]!.readyUnits! },
    );
    assert.deepEqual(p.writes, []);
    assert.equal(p.reason, GitLabSecretsReason.SecretsReported);
    assert.match(
      p.message,
      /ssh_host_rsa_key: the host key pair recorded ready is gone; not generated again/,
    );
    // It stays recorded, so the next pass (a spec change, a resync) reports it again.
    assert.deepEqual(p.statuses[0]!.readyUnits, first.statuses[0]!.readyUnits);
    const next = await plan(
      hostKeys,
      { "gl-gitlab-shell-host-keys": { resourceVersion: "10", data } },
      { "gl-gitlab-shell-host-keys": p.statuses[0]!.readyUnits! },
    );
    assert.deepEqual(next.writes, []);
    // Not recorded (a new resource, or before the first pass finished): generated.
    const fresh = await plan(hostKeys, { "gl-gitlab-shell-host-keys": { resourceVersion: "9", data } });
    assert.deepEqual(Object.keys(fresh.writes[0]!.data).sort(), ["ssh_host_rsa_key", "ssh_host_rsa_key.pub"]);
  });
});

// ---- railsSecrets -----------------------------------------------------------------------------

/** The fields the chart's shared-secrets script writes into secrets.yml. */
const RAILS_FIELDS = [
  { path: "secret_key_base", shape: "scalar", charset: "hex", length: 128 },
  { path: "otp_key_base", shape: "scalar", charset: "hex", length: 128 },
  { path: "db_key_base", shape: "scalar", charset: "hex", length: 128 },
  { path: "encrypted_settings_key_base", shape: "scalar", charset: "hex", length: 128 },
  { path: "openid_connect_signing_key", shape: "pem", bits: 2048 },
  { path: "active_record_encryption_primary_key", shape: "list", charset: "alphanumeric", length: 32 },
  { path: "active_record_encryption_deterministic_key", shape: "list", charset: "alphanumeric", length: 32 },
  {
    path: "active_record_encryption_key_derivation_salt",
    shape: "scalar",
    charset: "alphanumeric",
    length: 32,
  },
] as const;
const rails: GitLabSecretsSpec = {
  secrets: [
    {
      name: "gl-rails-secret",
      generators: [
        { type: "railsSecrets", key: "secrets.yml", env: "production", fields: [...RAILS_FIELDS] },
      ],
    },
  ],
};

describe("railsSecrets generator", () => {
  it("writes secrets.yml with every field GitLab expects, each of its shape", async () => {
    const p = await plan(rails);
    assert.equal(p.reason, GitLabSecretsReason.SecretsReady, p.message);
    const doc = parse(text(p.writes[0]!.data["secrets.yml"])) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(doc), ["production"]);
    const env = doc["production"]!;
    assert.deepEqual(
      Object.keys(env),
      RAILS_FIELDS.map((f) => f.path),
    );
    for (const f of ["secret_key_base", "otp_key_base", "db_key_base", "encrypted_settings_key_base"])
      assert.match(String(env[f]), /^[a-f0-9]{128}$/, f);
    assert.match(String(env["active_record_encryption_key_derivation_salt"]), /^[a-zA-Z0-9]{32}$/);
    for (const f of ["active_record_encryption_primary_key", "active_record_encryption_deterministic_key"]) {
      const list = env[f] as string[];
      assert.equal(list.length, 1, `${f}: a one-element list (rotation appends)`);
      assert.match(list[0]!, /^[a-zA-Z0-9]{32}$/);
    }
    const key = createPrivateKey(String(env["openid_connect_signing_key"]));
    assert.equal(key.asymmetricKeyDetails?.modulusLength, 2048);
    assert.deepEqual(
      p.statuses[0]!.readyUnits,
      RAILS_FIELDS.map((f) => `secrets.yml#production.${f.path}`),
    );
  });

  it("fills absent, null and empty fields only, keeping every other field, environment, list and comment", async () => {
    const doc0 = [
      "# kept",
      "production:",
      "  db_key_base: 0123abcd",
      "  secret_key_base:",
      "  otp_key_base: ''",
      "  active_record_encryption_primary_key:",
      "    - old",
      "    - new",
      "  custom_field: mine",
      "development:",
      "  db_key_base: devkey",
      "",
    ].join("\n");
    const p = await plan(rails, {
      "gl-rails-secret": { resourceVersion: "4", data: { "secrets.yml": b64(doc0) } },
    });
    const w = p.writes[0]!;
    assert.equal(w.op, "patch");
    const out = text(w.data["secrets.yml"]);
    assert.match(out, /^# kept\n/);
    const doc = parse(out) as Record<string, Record<string, unknown>>;
    assert.equal(doc["production"]!["db_key_base"], "0123abcd");
    assert.deepEqual(doc["production"]!["active_record_encryption_primary_key"], ["old", "new"]);
    assert.equal(doc["production"]!["custom_field"], "mine");
    assert.deepEqual(doc["development"], { db_key_base: "devkey" });
    assert.match(String(doc["production"]!["secret_key_base"]), /^[a-f0-9]{128}$/);
    assert.match(String(doc["production"]!["otp_key_base"]), /^[a-f0-9]{128}$/);
    for (const f of RAILS_FIELDS) assert.ok(doc["production"]![f.path], `${f.path} filled or kept`);
    // A complete document is left alone.
    const again = await plan(rails, {
      "gl-rails-secret": { resourceVersion: "5", data: { "secrets.yml": w.data["secrets.yml"]! } },
    });
    assert.deepEqual(again.writes, []);
  });

  it("reports a secrets.yml that does not parse, and a field recorded ready that is now empty, without quoting them", async () => {
    const broken = await plan(rails, {
      "gl-rails-secret": {
        resourceVersion: "4",
        data: { "secrets.yml": b64("production: [unclosed\n  s3cr3t") },
      },
    });
    assert.deepEqual(broken.writes, []);
    assert.equal(broken.reason, GitLabSecretsReason.SecretsReported);
    assert.match(
      broken.message,
      /gl-rails-secret: secrets.yml: secrets.yml does not parse as YAML; left as it is/,
    );
    assert.doesNotMatch(broken.message, /s3cr3t/);

    const first = await plan(rails);
    const doc = parse(text(first.writes[0]!.data["secrets.yml"])) as Record<string, Record<string, unknown>>;
    doc["production"]!["db_key_base"] = null;
    delete doc["production"]!["otp_key_base"];
    const units = first.statuses[0]!.readyUnits!.filter((u) => !u.endsWith(".otp_key_base"));
    const { stringify } = await import("yaml");
    const p = await plan(
      rails,
      { "gl-rails-secret": { resourceVersion: "8", data: { "secrets.yml": b64(stringify(doc)) } } },
      { "gl-rails-secret": units },
    );
    assert.equal(p.reason, GitLabSecretsReason.SecretsReported);
    assert.match(
      p.message,
      /secrets.yml#production.db_key_base: recorded ready, now absent or empty; not generated again/,
    );
    // otp_key_base was never recorded ready (a field a newer chart adds): filled.
    const out = parse(text(p.writes[0]!.data["secrets.yml"])) as Record<string, Record<string, unknown>>;
    assert.equal(out["production"]!["db_key_base"], null);
    assert.match(String(out["production"]!["otp_key_base"]), /^[a-f0-9]{128}$/);
    assert.equal(p.statuses[0]!.ready, false);
  });

  it("refuses fields a shape cannot generate, naming the field", async () => {
    const bad = (fields: unknown) =>
      plan({
        secrets: [
          {
            name: "r",
            generators: [{ type: "railsSecrets", key: "secrets.yml", env: "production", fields } as never],
          },
        ],
      });
    assert.equal(
      (await bad([{ path: "a", shape: "pem" }])).invalid,
      "spec.secrets[0].generators[0].fields[0].bits: a pem field needs bits, an integer of at least 1024",
    );
    assert.equal(
      (await bad([{ path: "a", shape: "scalar", length: 4 }])).invalid,
      "spec.secrets[0].generators[0].fields[0].charset: a scalar field needs one of alphanumeric, hex, lowerAlphanumeric",
    );
    assert.equal(
      (await bad([])).invalid,
      "spec.secrets[0].generators[0].fields: at least one field is required",
    );
  });
});

// ---- spec.certificates ------------------------------------------------------------------------

const certSet = (algorithm: "rsa" | "ecdsa" = "ecdsa"): GitLabSecretsSpec => ({
  certificates: [
    {
      authority: {
        commonName: "GitLab Helm Chart",
        organization: "gitlab-system",
        organizationalUnit: "gl",
        algorithm,
        ...(algorithm === "rsa" ? { keySize: 2048 } : {}),
        expiry: "3650d",
      },
      domain: "example.com",
      certDays: 365,
      tlsSecret: "gl-wildcard-tls",
      caSecret: "gl-wildcard-tls-ca",
      caKey: "cfssl_ca",
      chainSecret: "gl-wildcard-tls-chain",
      chainKey: "gitlab.example.com.crt",
    },
  ],
});

describe("spec.certificates: a certificate set", () => {
  for (const algorithm of ["rsa", "ecdsa"] as const)
    it(`${algorithm}: an authority of the spec's subject and a wildcard certificate it signed, with their chain`, async () => {
      const now = new Date("2026-12-06T12:00:00Z");
      const p = await plan(certSet(algorithm), {}, {}, now);
      assert.equal(p.reason, GitLabSecretsReason.SecretsReady, p.message);
      const data = (name: string) => p.writes.find((w) => w.name === name)!.data;
      const ca = new X509Certificate(text(data("gl-wildcard-tls-ca")["cfssl_ca"]));
      const leaf = new X509Certificate(text(data("gl-wildcard-tls")["tls.crt"]));
      const key = createPrivateKey(text(data("gl-wildcard-tls")["tls.key"]));
      assert.equal(ca.subject, "O=gitlab-system\nOU=gl\nCN=GitLab Helm Chart");
      assert.ok(ca.ca && ca.verify(ca.publicKey), "a self-signed authority");
      assert.equal(Date.parse(ca.validTo) - Date.parse(ca.validFrom), 3650 * DAY, "expiry: 3650d");
      assert.ok(
        leaf.verify(ca.publicKey) && leaf.checkIssued(ca),
        "the wildcard certificate verifies against the authority",
      );
      assert.ok(leaf.checkPrivateKey(key), "tls.key is the certificate's key");
      assert.equal(leaf.subjectAltName, "DNS:*.example.com, DNS:example.com");
      assert.ok(leaf.checkHost("gitlab.example.com") && leaf.checkHost("registry.example.com"));
      assert.equal(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom), 365 * DAY, "certDays");
      assert.equal(key.asymmetricKeyType, algorithm === "rsa" ? "rsa" : "ec");
      assert.equal(
        text(data("gl-wildcard-tls-chain")["gitlab.example.com.crt"]),
        text(data("gl-wildcard-tls")["tls.crt"]) + text(data("gl-wildcard-tls-ca")["cfssl_ca"]),
      );
      assert.deepEqual(p.statuses[0], {
        name: "gl-wildcard-tls",
        ready: true,
        readyUnits: ["certificates/example.com"],
      });
    });

  it("derives a missing chain; reports a partial set, and a set recorded ready that is gone", async () => {
    const first = await plan(certSet());
    const data = (name: string) => first.writes.find((w) => w.name === name)!.data;
    const observed = {
      "gl-wildcard-tls": { resourceVersion: "1", data: data("gl-wildcard-tls") },
      "gl-wildcard-tls-ca": { resourceVersion: "1", data: data("gl-wildcard-tls-ca") },
    };
    const derived = await plan(certSet(), observed);
    assert.deepEqual(
      derived.writes.map((w) => [w.op, w.name]),
      [["create", "gl-wildcard-tls-chain"]],
    );
    assert.equal(
      text(derived.writes[0]!.data["gitlab.example.com.crt"]),
      text(data("gl-wildcard-tls")["tls.crt"]) + text(data("gl-wildcard-tls-ca")["cfssl_ca"]),
    );

    const partial = await plan(certSet(), { "gl-wildcard-tls-ca": observed["gl-wildcard-tls-ca"] });
    assert.deepEqual(
      partial.writes.filter((w) => Object.keys(w.data).length),
      [],
    );
    assert.equal(partial.reason, GitLabSecretsReason.SecretsReported);
    assert.match(partial.message, /certificates\/example.com: part of the set is present/);

    const gone = await plan(certSet(), {}, { "gl-wildcard-tls": ["certificates/example.com"] });
    assert.deepEqual(
      gone.writes.filter((w) => Object.keys(w.data).length),
      [],
    );
    assert.match(gone.message, /the certificate set recorded ready is gone; not issued again/);
    assert.doesNotMatch(gone.message + partial.message, /BEGIN/);
  });
});
