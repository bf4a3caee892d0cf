/**
 * The seed stage of a pass (seed-stages.ts): the mounts checked, then the compare-and-set replan
 * loop (read, plan, write) until the path holds what is declared or the pass has a reason to stop.
 */
import type { VaultSeed } from "../../apis/vaultseed.js";
import { VaultSeedReason as R } from "../../apis/vaultseed-names.js";
import type { Logger } from "../../runtime/log.js";
import type { CompiledSeed } from "./compile.js";
import type { KvState } from "./kv.js";
import { writePlan } from "./kv-write.js";
import { observeOnly } from "./observe-only.js";
import { outcomeOf } from "./outcome.js";
import { nextRotationAt, OWNER_MARKER_KEY, plan } from "./planner.js";
import { readRefValue } from "./refs.js";
import type { Deferred, Outcome, Progress, SeedPass } from "./seed-pass.js";
import { MAX_REPLANS } from "./seed-pass.js";

/**
 * Mounts, then read, plan and write with compare-and-set until the path holds what is declared, a
 * plan says to wait, or the path keeps changing under the writes (MAX_REPLANS).
 */
export async function seedPath(
  ctx: SeedPass,
  obj: VaultSeed,
  seed: CompiledSeed,
  log: Logger,
  signal: AbortSignal,
  progress: Progress,
): Promise<Outcome | Deferred> {
  // A path others copy from: passes copying from it wait for this one (resolveRefs).
  const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
  const end = ctx.d.passes && ctx.d.refs.isSource(seed.path) ? ctx.d.passes.begin(seed.path, key) : undefined;
  try {
    return await seedPathNow(ctx, obj, seed, log, signal, progress);
  } finally {
    end?.();
  }
}

async function seedPathNow(
  ctx: SeedPass,
  obj: VaultSeed,
  seed: CompiledSeed,
  log: Logger,
  signal: AbortSignal,
  progress: Progress,
): Promise<Outcome | Deferred> {
  const identity = { namespace: obj.metadata.namespace!, name: obj.metadata.name! };
  const mount = await ctx.d.mounts.check(seed.path, signal);
  if (!mount.ok) {
    return { verdict: { ready: false, stalled: true, reason: mount.reason, message: mount.message } };
  }
  // A reference read from a KV v1 mount would look like a missing source forever: say why instead.
  for (const ref of seed.refs) {
    const source = await ctx.d.mounts.check(ref.path, signal);
    if (!source.ok) {
      const message = `the source of ${ref.id}: ${source.message}`;
      return { verdict: { ready: false, stalled: true, reason: source.reason, message } };
    }
  }
  const cycle = ctx.d.refs.cycleOf(seed.path);
  // A source another pass of this process is writing now: come back when it is written (path-passes.ts).
  // In a cycle the other pass may be deferring on this one: read the sources as they are.
  const key = `${identity.namespace}/${identity.name}`;
  if (cycle === undefined || cycle.length === 0) {
    const sources = seed.refs.map((r) => r.path).filter((p) => p !== seed.path);
    const own = ctx.d.refs.isSource(seed.path) ? seed.path : undefined;
    const deferral = sources.length > 0 ? ctx.d.passes?.deferral(key, sources, own) : undefined;
    if (deferral) return { deferred: { ...deferral, why: `a pass writing ${sources.join(", ")}` } };
  }
  const claimant = ctx.d.claims.claimantOf(seed.path);
  // Only this object's own namespace is surely watched: elsewhere, absence from the cache proves nothing.
  const markerOwnerExists = (owner: string): boolean | undefined =>
    owner.startsWith(`${identity.namespace}/`) ? ctx.d.informer.get(owner) !== undefined : undefined;
  let managedKeys: readonly string[] | undefined = obj.status?.managedKeys;
  for (let attempt = 0; ; attempt++) {
    // After a conflict, a read already in flight may predate the other writer: read anew.
    let current =
      attempt === 0
        ? await ctx.d.reads.readFresh(seed.path, () => ctx.d.kv.read(seed.path, signal))
        : await ctx.d.kv.read(seed.path, signal);
    if (attempt > 0) ctx.d.reads.set(seed.path, current);
    if (current.customMetadata[OWNER_MARKER_KEY] !== undefined) ctx.unconfirmed.forget(key);
    else if (current.exists) {
      // Our own write whose answer was lost: the path is ours, with no grace to wait out.
      const landed = ctx.unconfirmed.landed(key, obj.metadata.uid ?? "", seed.path, current.data);
      if (landed) {
        managedKeys = [...new Set([...(managedKeys ?? []), ...landed])].sort();
        current = { ...current, ageMs: undefined };
      }
    }
    const refs = await resolveRefs(ctx, seed, signal);
    const generator = { ...ctx.d.generator, policy: (name: string) => passwordFrom(ctx, name, signal) };
    const planFor = (state: KvState) =>
      plan({
        object: identity,
        spec: obj.spec,
        // The adoption grace guards a write; observe-only writes nothing, so it reports at once.
        current: ctx.d.config.observeOnly ? { ...state, ageMs: undefined } : state,
        refs,
        managedKeys,
        generator,
        refCycle: cycle,
        claimant,
        markerOwnerExists,
        now: ctx.now(),
      });
    const p = await planFor(current);
    if (ctx.d.config.observeOnly) {
      // An adoption plans the data side only once the marker is stored; observe-only stores
      // nothing, so it plans that side against the marker it would have written.
      const rotation = {
        nextRotationMs: nextRotationAt(seed, current.customMetadata, ctx.now().getTime()),
      };
      if (!p.planAgain || !p.customMetadata) return { ...observeOnly(obj, p, current), ...rotation };
      const after = await planFor({ ...current, customMetadata: p.customMetadata });
      return {
        ...observeOnly(obj, { ...after, changes: [...p.changes, ...after.changes] }, current),
        ...rotation,
      };
    }
    const written = await writePlan(ctx, obj, seed.path, p, current, log, signal, progress);
    if (written === "conflict") {
      if (attempt + 1 >= MAX_REPLANS) {
        return {
          verdict: {
            ready: false,
            reconciling: true,
            reason: R.BackendUnavailable,
            message: `${seed.path} kept changing while being written; retrying`,
          },
          next: "wait",
        };
      }
      log.info({ path: seed.path }, "the path changed since it was read; reading and planning again");
      continue;
    }
    managedKeys = p.managedKeys;
    if (p.planAgain && attempt + 1 < MAX_REPLANS) continue;
    return {
      ...outcomeOf(p, written.version, written.metadata),
      nextRotationMs: nextRotationAt(seed, written.metadata, ctx.now().getTime()),
    };
  }
}

export function passwordFrom(ctx: SeedPass, name: string, signal: AbortSignal): Promise<string> {
  if (!ctx.d.kv.generatePassword) return ctx.d.generator.policy(name);
  return ctx.d.kv.generatePassword(name, signal);
}

/** Reference sources come from this pass's reads when fresh, otherwise from one read each. */
export async function resolveRefs(
  ctx: SeedPass,
  seed: CompiledSeed,
  signal: AbortSignal,
): Promise<Map<string, string | undefined>> {
  const values = new Map<string, string | undefined>();
  for (const ref of seed.refs) {
    const source = await ctx.d.reads.readShared(ref.path, () => ctx.d.kv.read(ref.path, signal));
    values.set(ref.id, source.exists ? readRefValue(source.data, ref.key) : undefined);
  }
  return values;
}
