import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { CachedReader } from "../../../runtime/cached-reader.js";
import type { KindReason } from "../../../runtime/conditions.js";
import type { EventRecorder } from "../../../runtime/events.js";
import {
  enabledVerification,
  type FailurePolicy,
  failurePolicyOf,
  type VerificationField,
  verifySettings,
} from "./settings.js";
import { ImageVerificationError, type ImageVerifier } from "./verifier.js";

/**
 * One image checked under one verification block, with its failure policy applied:
 * - `skipped`: the block is not enabled; the image is used as written.
 * - `pinned`: verified; the pods run `image` (the verified digest), so what runs is what was checked.
 * - `warned`: failed under Warn; the image is used as written and a Warning event said why.
 * - `blocked`: failed under Block; nothing may use the image. `reason` is upstream's reason for that
 *   image, `message` names the image and what failed (never a credential).
 */
export type ImageCheck<R extends KindReason> =
  | { kind: "skipped"; image: string }
  | { kind: "pinned"; image: string; cached: boolean }
  | { kind: "warned"; image: string; message: string }
  | { kind: "blocked"; reason: R; message: string; transient: boolean };

/** What a check reads (pull Secrets) and says (the Warning event under Warn). */
export interface CheckContext {
  reader: Pick<CachedReader, "get">;
  events: Pick<EventRecorder, "record">;
  signal?: AbortSignal | undefined;
}

/** `R`: the reasons of the kind that reports a failure (the cluster's, or a restore's). */
export interface ImageCheckInput<R extends KindReason> {
  field: VerificationField;
  image: string;
  /** Upstream's reason for a failure of this image (ImageVerificationFailed, …ExecutorImage…). */
  reason: R;
  /** What the image is for, in messages: "OpenBao image", "backup executor image". */
  what: string;
}

export async function checkImage<R extends KindReason>(
  verifier: ImageVerifier,
  ctx: CheckContext,
  cluster: OpenBaoCluster,
  input: ImageCheckInput<R>,
): Promise<ImageCheck<R>> {
  const block = enabledVerification(cluster.spec, input.field);
  if (!block) return { kind: "skipped", image: input.image };
  const policy: FailurePolicy = failurePolicyOf(block);
  let message: string;
  let transient = false;
  try {
    const settings = await verifySettings(
      ctx,
      cluster.metadata.namespace!,
      input.field,
      block,
      verifier.trustedRoot,
    );
    const ok = await verifier.verify(input.image, settings, ctx.signal);
    return { kind: "pinned", image: ok.pinned, cached: ok.cached };
  } catch (e) {
    if (ctx.signal?.aborted) throw e;
    transient = e instanceof ImageVerificationError && e.transient;
    message = `${input.what} ${input.image} failed verification: ${(e as Error).message}`;
  }
  if (policy === "Block") return { kind: "blocked", reason: input.reason, message, transient };
  ctx.events.record(cluster, {
    type: "Warning",
    reason: input.reason,
    action: "VerifyImage",
    note: `${message}; used anyway because spec.${input.field}.failurePolicy is Warn`,
  });
  return { kind: "warned", image: input.image, message };
}

/** The image a Job of the operator's may run, or why it may not. */
export type OperatorImage<R extends KindReason> =
  | { ok: true; image: string }
  | { ok: false; reason: R; message: string };

/**
 * An executor, snapshot or hook image under spec.operatorImageVerification (never the OpenBao
 * image's settings: upstream keeps the two apart, since the two kinds of image have different
 * signers). Without a verifier or with the block off, the image as written.
 */
export async function operatorImage<R extends KindReason>(
  verifier: ImageVerifier | undefined,
  ctx: CheckContext,
  cluster: OpenBaoCluster,
  image: string,
  reason: R,
  what: string,
): Promise<OperatorImage<R>> {
  if (!verifier) return { ok: true, image };
  const out = await checkImage(verifier, ctx, cluster, {
    field: "operatorImageVerification",
    image,
    reason,
    what,
  });
  if (out.kind === "blocked") return { ok: false, reason: out.reason, message: out.message };
  return { ok: true, image: out.image };
}
