/**
 * The trusted keys of DYNAMIC_CHART_KEYRING, read again for every pull so a key added to or removed
 * from the file (a mounted ConfigMap the kubelet updates in place) applies to the next pull without
 * a restart. The operator chart writes ASCII-armored keys (what `gpg --export --armor` prints);
 * helm's verifier reads only binary keyrings, so armored blocks are decoded here and the keys
 * concatenated into a binary keyring (a keyring is just a sequence of key packets). A binary
 * keyring (`gpg --export`) is taken as it is. Keys that do not load fail the pull, never skip it.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ChartPullError } from "./errors.js";

export interface LoadedKeyring {
  /** SHA-256 of the binary keyring: what a verification was made against. */
  digest: string;
  /** A binary keyring file holding exactly those keys, for `helm verify --keyring`. */
  file: string;
  /** How many public keys (primary key packets) it holds. */
  keys: number;
}

const BEGIN = /^-----BEGIN PGP ([A-Z ]+)-----\s*$/;
const END = /^-----END PGP ([A-Z ]+)-----\s*$/;

/** OpenPGP's CRC-24 (RFC 4880, 6.1) over the decoded armor body. */
export function crc24(data: Uint8Array): number {
  let crc = 0xb704ce;
  for (const byte of data) {
    crc ^= byte << 16;
    for (let i = 0; i < 8; i++) {
      crc <<= 1;
      if (crc & 0x1000000) crc ^= 0x1864cfb;
    }
  }
  return crc & 0xffffff;
}

/**
 * The binary packets of every armored block in `text`. Each block must be a PUBLIC KEY BLOCK whose
 * checksum (when given) matches; anything else is refused with the block's position named.
 */
export function dearmor(text: string, where: string): Buffer[] {
  const lines = text.split(/\r?\n/);
  const blocks: Buffer[] = [];
  let i = 0;
  while (i < lines.length) {
    const begin = BEGIN.exec(lines[i]!);
    i++;
    if (!begin) continue;
    const n = blocks.length + 1;
    if (begin[1] !== "PUBLIC KEY BLOCK")
      throw new ChartPullError(
        `${where}: block ${n} is a PGP ${begin[1]!.toLowerCase()}, not a public key block${
          begin[1]!.includes("PRIVATE") ? " (a secret key never belongs in a keyring)" : ""
        }`,
      );
    // Armor headers ("Comment: ..."), then the body up to the checksum line and the END line.
    while (i < lines.length && /^[A-Za-z][-A-Za-z]*: /.test(lines[i]!)) i++;
    let body = "";
    let checksum: string | undefined;
    let ended = false;
    for (; i < lines.length; i++) {
      const line = lines[i]!.trim();
      if (END.test(line)) {
        ended = true;
        i++;
        break;
      }
      if (line.startsWith("=")) checksum = line.slice(1);
      else body += line;
    }
    if (!ended) throw new ChartPullError(`${where}: block ${n} has no END line`);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length % 4 !== 0)
      throw new ChartPullError(`${where}: block ${n} is not valid base64`);
    const data = Buffer.from(body, "base64");
    if (checksum !== undefined) {
      const want = Buffer.from(checksum, "base64");
      if (want.length !== 3 || want.readUIntBE(0, 3) !== crc24(data))
        throw new ChartPullError(`${where}: block ${n} does not match its checksum (a damaged copy)`);
    }
    blocks.push(data);
  }
  return blocks;
}

/** The tag of each top-level packet (RFC 4880, 4.2); throws on a packet that runs past the end. */
export function packetTags(data: Uint8Array, where: string): number[] {
  const tags: number[] = [];
  let at = 0;
  while (at < data.length) {
    const head = data[at]!;
    if (!(head & 0x80)) throw new ChartPullError(`${where}: not an OpenPGP keyring (byte ${at})`);
    let tag: number;
    let len: number;
    let start: number;
    if (head & 0x40) {
      tag = head & 0x3f;
      const l0 = data[at + 1] ?? 0;
      if (l0 < 192) [len, start] = [l0, at + 2];
      else if (l0 < 224) [len, start] = [((l0 - 192) << 8) + (data[at + 2] ?? 0) + 192, at + 3];
      else if (l0 === 255)
        [len, start] = [Buffer.from(data.subarray(at + 2, at + 6)).readUInt32BE(0), at + 6];
      else throw new ChartPullError(`${where}: a partial-length packet has no place in a keyring`);
    } else {
      tag = (head >> 2) & 0x0f;
      const type = head & 0x03;
      if (type === 3) throw new ChartPullError(`${where}: an indeterminate-length packet in a keyring`);
      const size = 1 << type;
      len = Buffer.from(data.subarray(at + 1, at + 1 + size)).readUIntBE(0, size);
      start = at + 1 + size;
    }
    if (start + len > data.length) throw new ChartPullError(`${where}: truncated (packet at byte ${at})`);
    tags.push(tag);
    at = start + len;
  }
  return tags;
}

const PUBLIC_KEY = 6;
const SECRET_KEY = 5;
const SECRET_SUBKEY = 7;

/**
 * Reads DYNAMIC_CHART_KEYRING at `path` and writes its keys as a binary keyring under `dir`, named
 * by digest (written once per content). Refuses a missing or unreadable file, one with no public
 * key, and one holding a secret key.
 */
export async function loadKeyring(path: string, dir: string): Promise<LoadedKeyring> {
  const where = `DYNAMIC_CHART_KEYRING ${path}`;
  let raw: Buffer;
  try {
    raw = await readFile(path);
  } catch (e) {
    throw new ChartPullError(`${where} cannot be read (${(e as NodeJS.ErrnoException).code ?? e})`);
  }
  const text = raw.toString("latin1");
  const binary = /-----BEGIN PGP /.test(text) ? Buffer.concat(dearmor(text, where)) : raw;
  const tags = packetTags(binary, where);
  if (tags.includes(SECRET_KEY) || tags.includes(SECRET_SUBKEY))
    throw new ChartPullError(`${where} holds a secret key; only public keys belong in a keyring`);
  const keys = tags.filter((t) => t === PUBLIC_KEY).length;
  if (keys === 0)
    throw new ChartPullError(`${where} holds no public key, so no chart can be verified and none is pulled`);
  const digest = createHash("sha256").update(binary).digest("hex");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${digest}.gpg`);
  if (!(await stat(file).catch(() => undefined))) {
    // Written beside and renamed: a concurrent pull never reads half a keyring.
    const tmp = `${file}.${process.pid}.${Date.now()}`;
    await writeFile(tmp, binary, { mode: 0o600 });
    await rename(tmp, file);
  }
  return { digest, file, keys };
}
