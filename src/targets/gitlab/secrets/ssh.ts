/**
 * SSH host keys as the chart's shared-secrets Job leaves them after `ssh-keygen -A`: one pair per
 * key type OpenSSH generates there (RSA 3072, ECDSA P-256, Ed25519), the private key in OpenSSH's
 * own format (`openssh-key-v1`, unencrypted) and the public key as an authorized_keys line.
 * node:crypto makes the keys; the wire encodings (RFC 4251 strings and mpints) are written here,
 * since no node API writes OpenSSH's formats. Pure apart from the key generation and check bytes.
 */
import { createPrivateKey, createPublicKey, type KeyObject, randomBytes } from "node:crypto";

/** The key types, with the Secret keys `ssh-keygen -A` and `--from-file host_keys` produce. */
export const SshHostKeyTypes = ["rsa", "ecdsa", "ed25519"] as const;
export type SshHostKeyType = (typeof SshHostKeyTypes)[number];

export const privateKeyName = (t: SshHostKeyType): string => `ssh_host_${t}_key`;
export const publicKeyName = (t: SshHostKeyType): string => `ssh_host_${t}_key.pub`;

/** ssh-keygen's defaults for each type. */
export const RSA_BITS = 3072;
const ALGORITHM: Record<SshHostKeyType, string> = {
  rsa: "ssh-rsa",
  ecdsa: "ecdsa-sha2-nistp256",
  ed25519: "ssh-ed25519",
};
const CURVE = "nistp256";
const MAGIC = Buffer.from("openssh-key-v1\0", "latin1");

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
/** RFC 4251 string: a length, then the bytes. */
const str = (b: Buffer | string): Buffer => {
  const bytes = typeof b === "string" ? Buffer.from(b, "utf8") : b;
  return Buffer.concat([u32(bytes.length), bytes]);
};
/** RFC 4251 mpint of a non-negative number: no leading zero bytes, one added when the top bit is set. */
const mpint = (b: Buffer): Buffer => {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  let body = b.subarray(i);
  if (body.length && body[0]! & 0x80) body = Buffer.concat([Buffer.from([0]), body]);
  return str(body);
};
const b64url = (s: string | undefined, what: string): Buffer => {
  if (!s) throw new Error(`key has no ${what}`);
  return Buffer.from(s, "base64url");
};

interface Jwk {
  kty?: string;
  crv?: string;
  n?: string;
  e?: string;
  d?: string;
  p?: string;
  q?: string;
  qi?: string;
  x?: string;
  y?: string;
}

/** The SSH type of a node key, or an error naming what it is. */
function sshTypeOf(key: KeyObject): SshHostKeyType {
  const t = key.asymmetricKeyType;
  if (t === "rsa") return "rsa";
  if (t === "ed25519") return "ed25519";
  if (t === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") return "ecdsa";
  throw new Error(`a ${t ?? "unknown"} key is not an SSH host key type this operator writes`);
}

/** The public key blob (RFC 4253 6.6, RFC 5656 3.1, RFC 8709 4) of a public or private key. */
export function publicBlob(key: KeyObject): Buffer {
  const type = sshTypeOf(key);
  const jwk = (key.type === "private" ? createPublicKey(key) : key).export({ format: "jwk" }) as Jwk;
  switch (type) {
    case "rsa":
      return Buffer.concat([str(ALGORITHM.rsa), mpint(b64url(jwk.e, "e")), mpint(b64url(jwk.n, "n"))]);
    case "ecdsa":
      return Buffer.concat([
        str(ALGORITHM.ecdsa),
        str(CURVE),
        str(Buffer.concat([Buffer.from([4]), b64url(jwk.x, "x"), b64url(jwk.y, "y")])),
      ]);
    case "ed25519":
      return Buffer.concat([str(ALGORITHM.ed25519), str(b64url(jwk.x, "x"))]);
  }
}

/** The private fields after the key type in OpenSSH's private section, per type. */
function privateFields(key: KeyObject, type: SshHostKeyType): Buffer {
  const jwk = key.export({ format: "jwk" }) as Jwk;
  switch (type) {
    case "rsa":
      return Buffer.concat(
        [jwk.n, jwk.e, jwk.d, jwk.qi, jwk.p, jwk.q].map((v, i) => mpint(b64url(v, `rsa field ${i}`))),
      );
    case "ecdsa":
      return Buffer.concat([
        str(CURVE),
        str(Buffer.concat([Buffer.from([4]), b64url(jwk.x, "x"), b64url(jwk.y, "y")])),
        mpint(b64url(jwk.d, "d")),
      ]);
    case "ed25519": {
      const pub = b64url(jwk.x, "x");
      // OpenSSH stores the 32-byte seed followed by the public key as the 64-byte secret.
      return Buffer.concat([str(pub), str(Buffer.concat([b64url(jwk.d, "d"), pub]))]);
    }
  }
}

/** An unencrypted `-----BEGIN OPENSSH PRIVATE KEY-----` file, as ssh-keygen writes one. */
export function opensshPrivateKey(key: KeyObject, comment = "", checkBytes: Buffer = randomBytes(4)): string {
  const type = sshTypeOf(key);
  const check = checkBytes.subarray(0, 4);
  let section = Buffer.concat([check, check, str(ALGORITHM[type]), privateFields(key, type), str(comment)]);
  // Padded with 1, 2, 3, ... to the cipher's block size (8 for "none").
  const pad: number[] = [];
  for (let i = 1; (section.length + pad.length) % 8 !== 0; i++) pad.push(i);
  section = Buffer.concat([section, Buffer.from(pad)]);
  const body = Buffer.concat([
    MAGIC,
    str("none"),
    str("none"),
    str(""),
    u32(1),
    str(publicBlob(key)),
    str(section),
  ]);
  const lines = body.toString("base64").match(/.{1,70}/g) ?? [];
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join("\n")}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

/** An authorized_keys line: `<algorithm> <base64 blob>`, a newline at the end. */
export function publicKeyLine(blob: Buffer): string {
  const type = readString(blob, 0).value.toString("latin1");
  return `${type} ${blob.toString("base64")}\n`;
}

function readString(buf: Buffer, at: number): { value: Buffer; next: number } {
  if (at + 4 > buf.length) throw new Error("truncated");
  const n = buf.readUInt32BE(at);
  if (at + 4 + n > buf.length) throw new Error("truncated");
  return { value: buf.subarray(at + 4, at + 4 + n), next: at + 4 + n };
}

/**
 * The public key line of an existing private key: read from an OpenSSH file's header (stored in
 * clear even when the key is encrypted), or derived from a PEM key. Throws when the text is
 * neither; the caller reports that without quoting it.
 */
export function publicKeyOf(privateText: string): string {
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(
    privateText,
  );
  if (m) {
    const body = Buffer.from(m[1]!.replace(/\s+/g, ""), "base64");
    if (!body.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error("not an openssh-key-v1 file");
    let at = MAGIC.length;
    for (let i = 0; i < 3; i++) at = readString(body, at).next; // cipher, kdf, kdf options
    if (at + 4 > body.length || body.readUInt32BE(at) < 1) throw new Error("holds no key");
    return publicKeyLine(readString(body, at + 4).value);
  }
  return publicKeyLine(publicBlob(createPrivateKey(privateText)));
}
