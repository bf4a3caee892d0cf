// Value generators for VaultSeed templates. Every random byte comes from a RandomSource so tests can
// make generation reproducible; the default source is node:crypto. The one exception is the age
// identity, which age-encryption draws itself unless `newAgeIdentity` is injected.

import { createHash, createHmac, randomBytes } from "node:crypto";
import bcrypt from "bcryptjs";
import { generateX25519Identity, identityToRecipient } from "./age-x25519.js";

export interface RandomSource {
  bytes(count: number): Uint8Array;
}

export const cryptoRandom: RandomSource = { bytes: (count) => randomBytes(count) };

/**
 * A reproducible source for tests and benchmarks: SHA-256 over (seed, counter). Its output is as
 * unpredictable as the seed is secret, which in a test it is not; the controller never uses it.
 */
export function deterministicRandom(seed: string): RandomSource {
  let counter = 0;
  let pool = Buffer.alloc(0);
  return {
    bytes(count) {
      while (pool.length < count) {
        const block = createHash("sha256").update(`${seed}\0${counter++}`).digest();
        pool = Buffer.concat([pool, block]);
      }
      const out = pool.subarray(0, count);
      pool = pool.subarray(count);
      return new Uint8Array(out);
    },
  };
}

export interface AgeKeyPair {
  secret: string;
  public: string;
}

export interface ValueGenerator {
  random(length: number): string;
  hex(length: number): string;
  uuid(): string;
  /** A value from the backend's password policy `name`; the one generator that asks the backend. */
  policy(name: string): Promise<string>;
  agePair(): Promise<AgeKeyPair>;
  /** The recipient of an X25519 identity, or undefined when the text is not one. */
  agePublicOf(secret: string): Promise<string | undefined>;
  bcryptHash(value: string): Promise<string>;
  bcryptMatches(value: string, hash: string): Promise<boolean>;
}

export interface GeneratorOptions {
  random?: RandomSource;
  /** bcrypt cost factor, 4 to 31. Tests use 4 to stay fast. */
  bcryptCost?: number;
  newAgeIdentity?: () => Promise<string>;
  /** Asks the backend's password policy; the reconciler binds it to its KV client for each pass. */
  policy?: (name: string) => Promise<string>;
  /** How many verified (value, hash) pairs to remember; 0 turns the memory off. */
  bcryptMatchMemory?: number;
}

export const DEFAULT_BCRYPT_COST = 10;
export const DEFAULT_BCRYPT_MATCH_MEMORY = 10_000;

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
// The largest multiple of 62 that fits in a byte: bytes at or above it are dropped, so every
// character is equally likely (a plain modulo would favour the first eight).
const UNBIASED_LIMIT = 256 - (256 % ALPHANUMERIC.length);

export function randomAlphanumeric(source: RandomSource, length: number): string {
  let out = "";
  while (out.length < length) {
    // Ask for a little more than needed: about 3% of bytes are rejected.
    for (const byte of source.bytes(Math.ceil((length - out.length) * 1.1) + 4)) {
      if (byte >= UNBIASED_LIMIT) continue;
      out += ALPHANUMERIC[byte % ALPHANUMERIC.length];
      if (out.length === length) break;
    }
  }
  return out;
}

export function randomHex(source: RandomSource, length: number): string {
  if (length % 2 !== 0) throw new RangeError("hex length must be even");
  return Buffer.from(source.bytes(length / 2)).toString("hex");
}

export function randomUuid(source: RandomSource): string {
  const bytes = Buffer.from(source.bytes(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export async function agePublicOf(secret: string): Promise<string | undefined> {
  // Only the native X25519 form: the spec promises an X25519 pair, not a post-quantum one.
  if (!secret.startsWith("AGE-SECRET-KEY-1")) return undefined;
  try {
    return identityToRecipient(secret);
  } catch {
    return undefined;
  }
}

export function bcryptSalt(source: RandomSource, cost: number): string {
  return `$2b$${String(cost).padStart(2, "0")}$${bcrypt.encodeBase64(source.bytes(16), 16)}`;
}

export function createGenerator(options: GeneratorOptions = {}): ValueGenerator {
  const source = options.random ?? cryptoRandom;
  const cost = options.bcryptCost ?? DEFAULT_BCRYPT_COST;
  if (!Number.isInteger(cost) || cost < 4 || cost > 31) throw new RangeError("bcrypt cost must be 4 to 31");
  const newAgeIdentity = options.newAgeIdentity ?? (async () => generateX25519Identity());
  const memory = new MatchMemory(source, options.bcryptMatchMemory ?? DEFAULT_BCRYPT_MATCH_MEMORY);
  return {
    random: (length) => randomAlphanumeric(source, length),
    hex: (length) => randomHex(source, length),
    uuid: () => randomUuid(source),
    policy:
      options.policy ??
      (async (name) => {
        throw new Error(`no backend to ask for password policy ${name}`);
      }),
    async agePair() {
      const secret = await newAgeIdentity();
      return { secret, public: identityToRecipient(secret) };
    },
    agePublicOf,
    async bcryptHash(value) {
      const hash = await bcrypt.hash(value, bcryptSalt(source, cost));
      // A hash made here needs no check on the next resync of this process.
      memory.remember(value, hash);
      return hash;
    },
    async bcryptMatches(value, hash) {
      if (memory.knows(value, hash)) return true;
      let matches: boolean;
      try {
        matches = await bcrypt.compare(value, hash);
      } catch {
        matches = false;
      }
      if (matches) memory.remember(value, hash);
      return matches;
    },
  };
}

/**
 * A bcrypt check costs tens of milliseconds by design, and every resync repeats it for every hash.
 * Remembering the pairs already verified keeps a quiet resync cheap. The value is kept only as an
 * HMAC under a key that never leaves this process, so the memory holds nothing a hash would not.
 */
class MatchMemory {
  private readonly entries = new Map<string, string>();
  private readonly key: Uint8Array;

  constructor(
    source: RandomSource,
    private readonly capacity: number,
  ) {
    this.key = source.bytes(32);
  }

  private digest(value: string): string {
    return createHmac("sha256", this.key).update(value).digest("base64");
  }

  knows(value: string, hash: string): boolean {
    return this.capacity > 0 && this.entries.get(hash) === this.digest(value);
  }

  remember(value: string, hash: string): void {
    if (this.capacity <= 0) return;
    this.entries.delete(hash);
    this.entries.set(hash, this.digest(value));
    if (this.entries.size > this.capacity) {
      this.entries.delete(this.entries.keys().next().value!);
    }
  }
}
