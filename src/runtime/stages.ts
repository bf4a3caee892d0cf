/**
 * The pass kernel: a reconcile pass as ordered, named stages. Each stage reads a typed context and
 * either lets the pass go on, adding its output to the context, or stops it: waiting (looked at
 * again later), failed (retried with the runtime's failure backoff, counted as an error) or
 * invalid (nothing happens until the object changes). The kernel knows no kind: reasons are the
 * kind's reason union `R`, and a stop may carry the kind's own account of where it stopped (`D`),
 * for its status. `settleStages` (stages-settle.ts) turns the outcome into conditions and the
 * ReconcileResult, so a target keeps no retry schedule of its own.
 *
 * The context grows by intersection: a stage is typed by the context it reads, so a stage that
 * reads an output no earlier stage produced does not compile where it is added.
 */
import type { KindReason } from "./conditions.js";
import { errorMessage } from "./errors.js";

/** The pass waits: looked at again after `afterMs` (the caller's default when not given). */
export interface StageWait<R extends KindReason, D> {
  kind: "wait";
  reason: R;
  message: string;
  afterMs?: number;
  /**
   * Who makes the progress being waited for, which says which condition shows the wait: the
   * controller itself ("progress", the default: Reconciling), someone outside it, such as a mount
   * to create or a person ("stalled": Stalled), or nobody this object can name ("quiet": only
   * Ready=False).
   */
  by?: "progress" | "stalled" | "quiet";
  detail?: D;
}

/** The pass failed: retried with the runtime's failure backoff and counted as an error. */
export interface StageFail<R extends KindReason, D> {
  kind: "fail";
  reason: R;
  message: string;
  error: unknown;
  detail?: D;
  /**
   * Fail for good after this many failed attempts in a row at this stage, counted in the kind's
   * status (stages-attempts.ts) so the count holds across operator restarts; unset: retried forever.
   */
  giveUpAfter?: number;
}

/** The object as written cannot be handled: nothing is retried until it changes. */
export interface StageInvalid<R extends KindReason, D> {
  kind: "invalid";
  reason: R;
  message: string;
  detail?: D;
}

export type StageStop<R extends KindReason, D = undefined> =
  | StageWait<R, D>
  | StageFail<R, D>
  | StageInvalid<R, D>;

export interface StageContinue<O> {
  kind: "continue";
  output: O;
}

/**
 * The pass decided nothing yet and writes nothing: it is looked at again once `until` settles (what
 * it needs is under way elsewhere in this process), or after `boundMs` at the latest. Unlike a wait,
 * no condition changes and no worker is held while it lasts.
 */
export interface StageDefer {
  kind: "defer";
  until: Promise<unknown>;
  boundMs: number;
  /** For the debug log: what the pass waits for. */
  why: string;
}

/** `X`: `StageDefer` for a kind whose stages may defer (runStages then hands it back), never otherwise. */
export type StageResult<R extends KindReason, D, O, X extends StageDefer = never> =
  | StageContinue<O>
  | StageStop<R, D>
  | X;

/** The pass goes on; `output`'s keys are added to the context (replacing same-named ones). */
export const proceed = <O extends object = Record<never, never>>(output: O = {} as O): StageContinue<O> => ({
  kind: "continue",
  output,
});

/**
 * The `afterMs` of a wait that ends at once: the next pass runs as soon as the queue reaches it,
 * for a pass that staged a step the next one builds on. 1 ms, since a requeue of 0 is none.
 */
export const AT_ONCE_MS = 1;

export const wait = <R extends KindReason, D = undefined>(
  reason: R,
  message: string,
  opts: { afterMs?: number; by?: StageWait<R, D>["by"]; detail?: D } = {},
): StageWait<R, D> => ({ kind: "wait", reason, message, ...opts });

export const defer = (until: Promise<unknown>, boundMs: number, why: string): StageDefer => ({
  kind: "defer",
  until,
  boundMs,
  why,
});

/** `message` defaults to the error's own message. */
export const fail = <R extends KindReason, D = undefined>(
  reason: R,
  error: unknown,
  opts: { message?: string; detail?: D; giveUpAfter?: number } = {},
): StageFail<R, D> => {
  if (opts.giveUpAfter !== undefined && !(Number.isInteger(opts.giveUpAfter) && opts.giveUpAfter >= 1))
    throw new Error(`fail: giveUpAfter must be a whole number of at least 1, not ${opts.giveUpAfter}`);
  return {
    kind: "fail",
    reason,
    error,
    message: opts.message ?? errorMessage(error),
    ...(opts.detail !== undefined ? { detail: opts.detail } : {}),
    ...(opts.giveUpAfter !== undefined ? { giveUpAfter: opts.giveUpAfter } : {}),
  };
};

export const invalid = <R extends KindReason, D = undefined>(
  reason: R,
  message: string,
  opts: { detail?: D } = {},
): StageInvalid<R, D> => ({ kind: "invalid", reason, message, ...opts });

/** The context after a stage adds `O`: its keys replace same-named ones. */
export type Grown<C, O> = Omit<C, keyof O> & O;

type AnyRun = (
  c: never,
) =>
  | Promise<StageResult<KindReason, unknown, object, StageDefer>>
  | StageResult<KindReason, unknown, object, StageDefer>;

/**
 * An ordered list of named stages over a context that starts as `C0` and is `C` after the last
 * one. Built with `stage`; names are unique (checked when added, and by the type checker).
 */
export class Stages<
  C0 extends object,
  C extends object,
  R extends KindReason,
  D,
  N extends string = never,
  X extends StageDefer = never,
> {
  private constructor(private readonly list: readonly { name: string; run: AnyRun }[]) {}

  /**
   * An empty pass over an initial context `C0`, stopping with reasons `R` and details `D`; with
   * `X = StageDefer` its stages may also defer the pass.
   */
  static over<C0 extends object, R extends KindReason, D = undefined, X extends StageDefer = never>(): Stages<
    C0,
    C0,
    R,
    D,
    never,
    X
  > {
    return new Stages([]);
  }

  stage<const Name extends string, O extends object>(
    name: Name extends N ? never : Name,
    run: (c: C) => Promise<StageResult<R, D, O, X>> | StageResult<R, D, O, X>,
  ): Stages<C0, Grown<C, O>, R, D, N | Name, X> {
    if (this.list.some((s) => s.name === name)) throw new Error(`stage name ${name} is used twice`);
    return new Stages([...this.list, { name, run: run as AnyRun }]);
  }

  get names(): readonly string[] {
    return this.list.map((s) => s.name);
  }

  /** @internal for runStages */
  get entries(): readonly { name: string; run: AnyRun }[] {
    return this.list;
  }
}

/** Where a pass ended: every stage ran (`done`, with the whole context), or the stage that stopped it. */
export type StagesOutcome<C, R extends KindReason, D, X extends StageDefer = never> =
  | { kind: "done"; context: C }
  | (StageStop<R, D> & { stage: string })
  | (X & { stage: string });

export interface RunStagesOptions<R extends KindReason, D> {
  /** Told which stage runs, before it runs (an error thrown inside is that stage's). */
  at?: (stage: string) => void;
  /**
   * A thrown error turned into a stop of the stage that threw; undefined (or no option) throws it
   * on, for the runtime's error backoff. Not asked for an aborted pass: that always throws on.
   */
  onThrow?: (error: unknown, stage: string) => StageStop<R, D> | undefined;
  signal?: AbortSignal;
}

/** Runs the stages in order until one stops the pass or all have run. */
export async function runStages<
  C0 extends object,
  C extends object,
  R extends KindReason,
  D,
  N extends string,
  X extends StageDefer = never,
>(
  stages: Stages<C0, C, R, D, N, X>,
  initial: C0,
  opts: RunStagesOptions<R, D> = {},
): Promise<StagesOutcome<C, R, D, X>> {
  let context: object = initial;
  for (const { name, run } of stages.entries) {
    opts.at?.(name);
    let out: StageResult<R, D, object, X>;
    try {
      out = (await run(context as never)) as StageResult<R, D, object, X>;
    } catch (e) {
      const stop = opts.signal?.aborted ? undefined : opts.onThrow?.(e, name);
      if (!stop) throw e;
      return { ...stop, stage: name };
    }
    if (out.kind !== "continue") return { ...out, stage: name };
    context = { ...context, ...out.output };
  }
  return { kind: "done", context: context as C };
}
