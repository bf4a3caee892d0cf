// The VaultSeed planner: from what the object declares and what the KV path holds, decide what to
// write. One thing, kept whole over 400 lines: every rule below (adoption, ownership, rotation,
// pruning, the write order) reads the same declared tree and current path and decides one plan. It performs no I/O; randomness comes through the injected generator, and it is async only
// because age and bcrypt are. The reconciler applies a plan in this order:
//   1. `data` (when not null) with `options.cas = expectedVersion`; on a CAS mismatch, read and plan again;
//   2. `customMetadata` (when not null), which replaces the path's whole custom_metadata map.
// Data goes first so that a rotation token is only recorded once the rotated values are stored.
// A rotation writes one more thing before the data: `intentMetadata`, the path's custom_metadata
// with a rotation-pending marker naming the version the rotated values will be. A controller
// killed between the data and the record finds that version stored and records the rotation
// instead of generating the keys a second time (their first values may already have been read).
//
// KV layout: the path's data is the declared tree as nested JSON objects, e.g.
//   { "admin": { "password": "...", "passwordHashed": "$2b$..." }, "webhook": "" }
// Markers in custom_metadata (short, two keys, leaving the other 62 to people):
//   ohmlab.fr/owner           "<namespace>/<name>" of the object that owns the path
//   ohmlab.fr/rotation-token  the last rotate.token whose keys were written
//   ohmlab.fr/rotation-period-start  when the current rotate.every period began (RFC 3339, UTC)
//   ohmlab.fr/rotation-pending  while a rotation is being written: the KV version that holds it

import { VaultSeedReason, type VaultSeedReasonType } from "../../apis/vaultseed-names.js";
import { isoTime } from "../../runtime/utc-time.js";
import { type CompiledSeed, compileSeed } from "./compile.js";
import type { ValueGenerator } from "./generate.js";
import type { PlanChange } from "./plan-summary.js";
import { summarizeChanges } from "./plan-summary.js";
import type { Template } from "./templates.js";
import { BCRYPT_MAX_INPUT_BYTES, isGenerated } from "./templates.js";
import {
  cloneTree,
  type DataTree,
  deleteAt,
  getAt,
  isPlainObject,
  leafText,
  ownValue,
  setAt,
} from "./tree.js";

export const OWNER_MARKER_KEY = "ohmlab.fr/owner";
export const ROTATION_TOKEN_KEY = "ohmlab.fr/rotation-token";
export const ROTATION_PERIOD_KEY = "ohmlab.fr/rotation-period-start";
export const ROTATION_PENDING_KEY = "ohmlab.fr/rotation-pending";

export const CUSTOM_METADATA_MAX_KEYS = 64;
export const CUSTOM_METADATA_MAX_KEY_BYTES = 128;
export const CUSTOM_METADATA_MAX_VALUE_BYTES = 512;

/**
 * A path without an owner marker whose latest version is younger than this is not adopted yet:
 * another controller may have just created it and be about to write its marker (the marker can
 * only follow the data, as KV v2 has no atomic write of both).
 */
export const ADOPTION_GRACE_MS = 5_000;

// The reasons of the VaultSeed documentation, named as in the CRD. A plan returns the first six;
// Forbidden, BackendUnavailable and ObserveOnly come from the reconciler.
/** The condition reasons, defined once with the kind in src/apis. */
export const Reason = VaultSeedReason;
export type Reason = VaultSeedReasonType;

export interface SeedIdentity {
  namespace: string;
  name: string;
}

/** The fields of VaultSeed.spec the planner reads; checked again at run time by compileSeed. */
export interface VaultSeedSpecInput {
  path: string;
  data: Record<string, unknown>;
  rotate?: { token?: string; every?: string; keys?: string[] };
  prune?: boolean;
  deletionPolicy?: "Retain" | "Delete";
}

export interface KvState {
  /** Whether the path has a live (not deleted) latest version. */
  exists: boolean;
  /** The path's current_version, 0 when it never existed: the CAS value of the next write. */
  version: number;
  /** The latest version's data, nested as described above; {} when the path does not exist. */
  data: DataTree;
  customMetadata: Record<string, string>;
  /** How long ago, by OpenBao's clock, the latest version was written; undefined when unknown. */
  ageMs?: number;
}

export interface PlanInput {
  object: SeedIdentity;
  spec: VaultSeedSpecInput;
  current: KvState;
  /** Resolved sources by RefTarget.id (`mount/path#key`); undefined or "" means missing or empty. */
  refs: ReadonlyMap<string, string | undefined>;
  /** status.managedKeys; undefined when the status was lost, which turns pruning off. */
  managedKeys: readonly string[] | undefined;
  generator: ValueGenerator;
  /** The paths of a reference cycle this object's path is in (from analyseRefs), if any. */
  refCycle?: readonly string[];
  /**
   * The owner marker of the object that wins this path among the objects one controller knows
   * (the oldest, then the lowest uid). Another object's claim keeps this one from taking a path
   * that carries no marker yet.
   */
  claimant?: string;
  /** Whether the object named by the path's owner marker exists; undefined when it cannot be known. */
  markerOwnerExists?: (owner: string) => boolean | undefined;
  /** The clock rotate.every is measured by; the reconciler's injected one. */
  now?: Date;
}

export type OutcomeKind = "ok" | "pending" | "stalled" | "conflict-owner" | "invalid";

export interface PlanOutcome {
  kind: OutcomeKind;
  reason: Reason;
  /** Names keys and paths, never values. */
  message: string;
}

export interface Plan {
  changes: PlanChange[];
  /** The path's complete new data, or null when data is not written. */
  data: DataTree | null;
  /** The path's complete new custom_metadata, or null when it is not written. */
  customMetadata: Record<string, string> | null;
  /**
   * Written before the data when the data rotates keys: the current custom_metadata with the
   * rotation-pending marker (the version the data write creates); null otherwise.
   */
  intentMetadata?: Record<string, string> | null;
  /** The version the data write must name as `cas`. */
  expectedVersion: number;
  /** status.managedKeys after the writes: the keys this controller has written and that remain. */
  managedKeys: string[];
  outcome: PlanOutcome;
  /** True after an adoption: the data side is planned on the next pass, once the marker is stored. */
  planAgain: boolean;
}

export function ownerMarkerOf(object: SeedIdentity): string {
  return `${object.namespace}/${object.name}`;
}

/**
 * When the current rotate.every period began, as recorded on the path; undefined when nothing (or
 * nothing readable) is recorded, or when the record lies further ahead than one period, which no
 * clock of this controller wrote: the period then starts again.
 */
export function recordedPeriodStart(
  customMetadata: Record<string, string>,
  periodMs: number,
  nowMs: number,
): number | undefined {
  const text = ownMarker(customMetadata, ROTATION_PERIOD_KEY);
  const start = text === undefined ? Number.NaN : Date.parse(text);
  if (Number.isNaN(start) || start > nowMs + periodMs) return undefined;
  return start;
}

/**
 * When the keys are next regenerated by rotate.every: one period after the recorded start, or one
 * period from now when no start is recorded yet (the pass that records it rotates nothing).
 */
export function nextRotationAt(
  seed: Pick<CompiledSeed, "rotate">,
  customMetadata: Record<string, string>,
  nowMs: number,
): number | undefined {
  const period = seed.rotate?.everyMs;
  if (period === undefined) return undefined;
  return (recordedPeriodStart(customMetadata, period, nowMs) ?? nowMs) + period;
}

/** The KV version a rotation in progress is written as, when a pass recorded one; undefined otherwise. */
export function pendingRotationVersion(customMetadata: Record<string, string>): number | undefined {
  const text = ownMarker(customMetadata, ROTATION_PENDING_KEY);
  const version = text === undefined ? Number.NaN : Number(text);
  return Number.isInteger(version) && version > 0 ? version : undefined;
}

export function recordedRotationToken(customMetadata: Record<string, string>): string | undefined {
  return ownMarker(customMetadata, ROTATION_TOKEN_KEY);
}

/** A marker of custom_metadata, read as the map's own key only (the map comes from OpenBao). */
export function ownMarker(customMetadata: Record<string, string>, key: string): string | undefined {
  const value = Object.hasOwn(customMetadata, key) ? customMetadata[key] : undefined;
  return typeof value === "string" ? value : undefined;
}

export function customMetadataProblem(metadata: Record<string, string>): string | undefined {
  const keys = Object.keys(metadata);
  if (keys.length > CUSTOM_METADATA_MAX_KEYS) {
    return `custom_metadata would hold ${keys.length} keys, more than ${CUSTOM_METADATA_MAX_KEYS}; remove some by hand to make room for the controller's markers`;
  }
  for (const key of keys) {
    if (Buffer.byteLength(key) > CUSTOM_METADATA_MAX_KEY_BYTES) {
      return `custom_metadata key ${key} is longer than ${CUSTOM_METADATA_MAX_KEY_BYTES} bytes`;
    }
    if (Buffer.byteLength(metadata[key]!) > CUSTOM_METADATA_MAX_VALUE_BYTES) {
      return `custom_metadata value of ${key} is longer than ${CUSTOM_METADATA_MAX_VALUE_BYTES} bytes`;
    }
  }
  return undefined;
}

function noWrites(input: PlanInput, outcome: PlanOutcome, changes: PlanChange[] = []): Plan {
  return {
    changes,
    data: null,
    customMetadata: null,
    expectedVersion: input.current.version,
    managedKeys: [...(input.managedKeys ?? [])].sort(),
    outcome,
    planAgain: false,
  };
}

export async function plan(input: PlanInput): Promise<Plan> {
  const compiled = compileSeed(input.spec);
  if (!compiled.ok) {
    const reason = compiled.problems.some((p) => p.reason === VaultSeedReason.InvalidSpec)
      ? Reason.InvalidSpec
      : Reason.InvalidRotation;
    return noWrites(input, {
      kind: "invalid",
      reason,
      message: compiled.problems.map((p) => p.message).join("; "),
    });
  }
  const seed = compiled.seed;

  if (input.refCycle && input.refCycle.length > 0) {
    const message = `reference cycle between paths ${[...input.refCycle].sort().join(", ")}`;
    return noWrites(input, { kind: "stalled", reason: Reason.RefCycle, message });
  }

  const me = ownerMarkerOf(input.object);
  const owner = ownMarker(input.current.customMetadata, OWNER_MARKER_KEY);
  if (owner !== undefined && owner !== me) {
    const message =
      input.markerOwnerExists?.(owner) === false
        ? `the path is owned by ${owner}, which no longer exists; removing the ${OWNER_MARKER_KEY} marker from the path's custom metadata hands the path over`
        : `the path is owned by ${owner}; delete one of the two objects, or remove the ${OWNER_MARKER_KEY} marker to hand the path over`;
    return noWrites(input, { kind: "conflict-owner", reason: Reason.OwnedByAnother, message });
  }
  if (owner === undefined && input.claimant !== undefined && input.claimant !== me) {
    const message = `the path is also declared by ${input.claimant}, which was created first and owns it; delete one of the two objects`;
    return noWrites(input, { kind: "conflict-owner", reason: Reason.OwnedByAnother, message });
  }

  const pending = pendingRefs(seed, input.refs);
  if (pending.length > 0) {
    return noWrites(input, {
      kind: "pending",
      reason: Reason.RefPending,
      message: `waiting for ${pending.join(", ")}`,
    });
  }

  if (input.current.exists && owner === undefined) {
    const age = input.current.ageMs;
    if (age !== undefined && age < ADOPTION_GRACE_MS) {
      return noWrites(input, {
        kind: "pending",
        reason: Reason.AdoptionPending,
        message: `the path was written moments ago and carries no ${OWNER_MARKER_KEY} marker yet; it is adopted once no other writer claims it`,
      });
    }
    return adopt(input, me);
  }
  return seedPath(input, seed, me);
}

function pendingRefs(seed: CompiledSeed, refs: ReadonlyMap<string, string | undefined>): string[] {
  const pending: string[] = [];
  for (const [key, template] of seed.declarations) {
    if (template.kind !== "ref") continue;
    const value = refs.get(template.ref.id);
    if (value === undefined || value === "") {
      pending.push(`${key} (source ${template.ref.id} is ${value === "" ? "empty" : "missing"})`);
    }
  }
  return pending;
}

// Adoption records the owner and leaves the data alone, as the spec says; it also creates no KV
// version. Keys the object still lacks are seeded on the next pass (planAgain), which is then an
// ordinary pass on an owned path. Keys that were there before adoption were not written by this
// controller, so they do not join managedKeys and prune never removes them.
function adopt(input: PlanInput, me: string): Plan {
  const metadata = { ...input.current.customMetadata, [OWNER_MARKER_KEY]: me };
  const problem = customMetadataProblem(metadata);
  if (problem) return noWrites(input, { kind: "stalled", reason: Reason.InvalidSpec, message: problem });
  const changes: PlanChange[] = [{ action: "adopt" }];
  return {
    ...noWrites(
      input,
      { kind: "ok", reason: Reason.Reconciled, message: summarizeChanges(changes) },
      changes,
    ),
    customMetadata: metadata,
    planAgain: true,
  };
}

const DATA_ACTIONS = new Set(["create-path", "add-field", "update-field", "rotate-field", "prune-field"]);
const WRITE_ACTIONS = new Set(["add-field", "update-field", "rotate-field"]);

class Draft {
  readonly changes: PlanChange[] = [];
  readonly problems: string[] = [];
  readonly blocked = new Set<string>();

  constructor(readonly tree: DataTree) {}

  has(key: string): boolean {
    return getAt(this.tree, key).found;
  }

  value(key: string): unknown {
    return getAt(this.tree, key).value;
  }

  put(key: string, value: unknown, action: PlanChange["action"]): void {
    if (!setAt(this.tree, key, value)) {
      this.blocked.add(key);
      const above = blockingAncestor(this.tree, key);
      this.problems.push(
        `${key} cannot be written: ${above} holds a value instead of a map; remove ${above} from the path by hand, or set prune: true if this controller wrote it`,
      );
      return;
    }
    this.changes.push({ action, key });
  }
}

async function seedPath(input: PlanInput, seed: CompiledSeed, me: string): Promise<Plan> {
  const { current, generator } = input;
  const draft = new Draft(cloneTree(current.exists ? current.data : {}));
  if (!current.exists) draft.changes.push({ action: "create-path" });

  const token = seed.rotate?.token;
  const rotationDue = token !== undefined && token !== recordedRotationToken(current.customMetadata);
  // rotate.every: due once the recorded period is over. With no start recorded (a new path, an
  // adopted one, a period just added), the period starts now and nothing rotates.
  const nowMs = (input.now ?? new Date()).getTime();
  const periodMs = seed.rotate?.everyMs;
  const periodStart =
    periodMs === undefined ? undefined : recordedPeriodStart(current.customMetadata, periodMs, nowMs);
  const periodDue = periodStart !== undefined && nowMs >= periodStart + periodMs!;
  const startsPeriod = periodMs !== undefined && (periodStart === undefined || periodDue);
  // A rotation whose data a killed pass stored (the pending version exists) is recorded, not redone.
  const pending = pendingRotationVersion(current.customMetadata);
  const rotationLanded = pending !== undefined && current.exists && current.version >= pending;
  // A path created now gets fresh values anyway; its token and period are only recorded.
  const rotating =
    (rotationDue || periodDue) && current.exists && !rotationLanded ? rotationKeys(seed) : new Set<string>();

  const pruned = seed.prune && current.exists ? prune(draft, seed, input.managedKeys) : new Set<string>();

  for (const [key, template] of seed.declarations) {
    await seedSimpleKey(draft, key, template, rotating, input.refs, generator);
  }
  await seedAgePair(draft, seed, rotating, generator);
  for (const [key, template] of seed.declarations) {
    if (template.kind === "bcrypt") await seedBcrypt(draft, key, template.target, generator);
  }

  const metadata = { ...current.customMetadata };
  let metadataChanged = false;
  if (ownMarker(metadata, OWNER_MARKER_KEY) !== me) {
    metadata[OWNER_MARKER_KEY] = me;
    metadataChanged = true;
  }
  // If a rotated key could not be stored, the token and the period wait so the rotation is tried again.
  const rotationStored = ![...rotating].some((key) => draft.blocked.has(key));
  if (rotationDue && rotationStored) {
    metadata[ROTATION_TOKEN_KEY] = token!;
    draft.changes.push({ action: "record-rotation" });
    metadataChanged = true;
  }
  if (startsPeriod && rotationStored) {
    // The new period starts at this pass, not at the end of the old one: a controller that was
    // down for several periods rotates once, not once per missed period.
    metadata[ROTATION_PERIOD_KEY] = isoTime(nowMs);
    const action = periodDue && current.exists ? "record-rotation" : "start-rotation-period";
    if (!draft.changes.some((c) => c.action === action)) draft.changes.push({ action });
    metadataChanged = true;
  }
  if (pending !== undefined) {
    delete metadata[ROTATION_PENDING_KEY];
    metadataChanged = true;
  }
  const metadataProblem = metadataChanged ? customMetadataProblem(metadata) : undefined;
  if (metadataProblem)
    return noWrites(input, { kind: "stalled", reason: Reason.InvalidSpec, message: metadataProblem });

  const writesData = draft.changes.some((change) => DATA_ACTIONS.has(change.action));
  const intentMetadata =
    writesData && rotating.size > 0 && rotationStored
      ? { ...current.customMetadata, [ROTATION_PENDING_KEY]: String(current.version + 1) }
      : null;
  const intentProblem = intentMetadata ? customMetadataProblem(intentMetadata) : undefined;
  if (intentProblem)
    return noWrites(input, { kind: "stalled", reason: Reason.InvalidSpec, message: intentProblem });
  return {
    changes: draft.changes,
    data: writesData ? draft.tree : null,
    customMetadata: metadataChanged ? metadata : null,
    intentMetadata,
    expectedVersion: current.version,
    managedKeys: managedKeysAfter(input.managedKeys, draft, seed, pruned),
    outcome: outcomeOf(draft),
    planAgain: false,
  };
}

function outcomeOf(draft: Draft): PlanOutcome {
  if (draft.problems.length > 0) {
    return { kind: "stalled", reason: Reason.InvalidSpec, message: draft.problems.join("; ") };
  }
  const message =
    draft.changes.length > 0 ? summarizeChanges(draft.changes) : "the path holds what is declared";
  return { kind: "ok", reason: Reason.Reconciled, message };
}

function rotationKeys(seed: CompiledSeed): Set<string> {
  const listed = seed.rotate!.keys;
  const keys = new Set(
    listed.length > 0 ? listed : [...seed.declarations].filter(([, t]) => isGenerated(t)).map(([key]) => key),
  );
  // The two halves of an age pair only ever change together.
  const ageKeys = [...seed.declarations].filter(
    ([, t]) => t.kind === "age-secret" || t.kind === "age-public",
  );
  if (ageKeys.some(([key]) => keys.has(key))) for (const [key] of ageKeys) keys.add(key);
  return keys;
}

function prune(draft: Draft, seed: CompiledSeed, managedKeys: readonly string[] | undefined): Set<string> {
  const pruned = new Set<string>();
  if (managedKeys === undefined) return pruned;
  const declared = [...seed.declarations.keys()];
  for (const key of [...managedKeys].sort()) {
    if (seed.declarations.has(key)) continue;
    // A managed key that the spec now declares as a map: a leaf this controller wrote there is
    // removed so the map can take its place; a map already there holds declared keys and stays.
    if (declared.some((d) => d.startsWith(`${key}.`)) && isPlainObject(draft.value(key))) continue;
    if (deleteAt(draft.tree, key)) {
      pruned.add(key);
      draft.changes.push({ action: "prune-field", key });
    }
  }
  return pruned;
}

async function seedSimpleKey(
  draft: Draft,
  key: string,
  template: Template,
  rotating: ReadonlySet<string>,
  refs: ReadonlyMap<string, string | undefined>,
  generator: ValueGenerator,
): Promise<void> {
  const exists = draft.has(key);
  const fresh = async (): Promise<string | undefined> => {
    switch (template.kind) {
      case "random":
        return generator.random(template.length);
      case "hex":
        return generator.hex(template.length);
      case "uuid":
        return generator.uuid();
      case "policy":
        return generator.policy(template.name);
      default:
        return undefined;
    }
  };
  switch (template.kind) {
    case "literal":
      if (!exists) draft.put(key, template.value, "add-field");
      return;
    case "random":
    case "hex":
    case "uuid":
    case "policy":
      // Asked for only when written: a quiet resync asks OpenBao's password policy nothing.
      if (!exists) draft.put(key, (await fresh())!, "add-field");
      else if (rotating.has(key)) draft.put(key, (await fresh())!, "rotate-field");
      return;
    case "ref": {
      // pendingRefs has already turned a missing or empty source away.
      const source = refs.get(template.ref.id)!;
      if (!exists) draft.put(key, source, "add-field");
      else if (draft.value(key) !== source) draft.put(key, source, "update-field");
      return;
    }
    default:
      return;
  }
}

// The secret decides: the public key is derived from it whenever it exists, so the two match
// after a generation, a rotation, or a hand edit of either half.
async function seedAgePair(
  draft: Draft,
  seed: CompiledSeed,
  rotating: ReadonlySet<string>,
  generator: ValueGenerator,
): Promise<void> {
  const secretKey = [...seed.declarations].find(([, t]) => t.kind === "age-secret")?.[0];
  if (secretKey === undefined) return;
  const publicKey = [...seed.declarations].find(([, t]) => t.kind === "age-public")?.[0];
  const secretExists = draft.has(secretKey);
  const publicExists = publicKey !== undefined && draft.has(publicKey);
  const rotate = rotating.has(secretKey);

  if (rotate || !secretExists) {
    const pair = await generator.agePair();
    draft.put(secretKey, pair.secret, secretExists ? "rotate-field" : "add-field");
    if (publicKey !== undefined) {
      draft.put(
        publicKey,
        pair.public,
        !publicExists ? "add-field" : rotate ? "rotate-field" : "update-field",
      );
    }
    return;
  }
  if (publicKey === undefined) return;
  const secret = leafText(draft.value(secretKey));
  const derived = secret === undefined ? undefined : await generator.agePublicOf(secret);
  if (derived === undefined) {
    draft.problems.push(
      `${publicKey} cannot follow ${secretKey}, which does not hold an age X25519 identity`,
    );
    return;
  }
  if (!publicExists) draft.put(publicKey, derived, "add-field");
  else if (draft.value(publicKey) !== derived) draft.put(publicKey, derived, "update-field");
}

async function seedBcrypt(
  draft: Draft,
  key: string,
  target: string,
  generator: ValueGenerator,
): Promise<void> {
  const value = leafText(draft.value(target));
  if (value === undefined || value === "") {
    draft.problems.push(
      `${key} hashes ${target}, which is still empty; the hash is written once ${target} is filled in`,
    );
    return;
  }
  if (Buffer.byteLength(value) > BCRYPT_MAX_INPUT_BYTES) {
    draft.problems.push(
      `${key} hashes ${target}, whose value is longer than bcrypt's ${BCRYPT_MAX_INPUT_BYTES}-byte input: a change after byte ${BCRYPT_MAX_INPUT_BYTES} would go unnoticed; shorten ${target}`,
    );
    return;
  }
  const hash = draft.value(key);
  if (!draft.has(key)) {
    draft.put(key, await generator.bcryptHash(value), "add-field");
  } else if (typeof hash !== "string" || !(await generator.bcryptMatches(value, hash))) {
    draft.put(key, await generator.bcryptHash(value), "update-field");
  }
}

function managedKeysAfter(
  previous: readonly string[] | undefined,
  draft: Draft,
  seed: CompiledSeed,
  pruned: ReadonlySet<string>,
): string[] {
  const keys = new Set<string>();
  for (const key of previous ?? []) {
    if (pruned.has(key)) continue;
    if (seed.declarations.has(key) || draft.has(key)) keys.add(key);
  }
  for (const change of draft.changes) {
    if (WRITE_ACTIONS.has(change.action) && change.key !== undefined) keys.add(change.key);
  }
  // A placeholder ("") is for a person to fill in: never the controller's, so never pruned.
  for (const key of keys) if (isPlaceholder(seed.declarations.get(key))) keys.delete(key);
  return [...keys].sort();
}

function isPlaceholder(template: Template | undefined): boolean {
  return template?.kind === "literal" && template.value === "";
}

/** The first key on the way to `key` that holds a value where a map is needed. */
function blockingAncestor(tree: DataTree, key: string): string {
  const segments = key.split(".");
  let node: unknown = tree;
  for (let i = 0; i < segments.length - 1; i++) {
    node = isPlainObject(node) ? ownValue(node, segments[i]!) : undefined;
    if (node !== undefined && !isPlainObject(node)) return segments.slice(0, i + 1).join(".");
  }
  return "a key above it";
}
