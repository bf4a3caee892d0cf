/**
 * Validating admission, without any domain: the AdmissionReview v1 the API server sends and the
 * answer it expects, and a registry where each target puts the check of each of its kinds. The
 * checks themselves are the targets' own (the same functions `validate` and the controllers call).
 */
import { deepEqual } from "./converge.js";

/** The part of an AdmissionReview's request the checks read. */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  name?: string;
  namespace?: string;
  object?: unknown;
  /** The stored object, on UPDATE (and DELETE). */
  oldObject?: unknown;
  dryRun?: boolean;
}

/** One refusal: the field (dotted path, as in kubectl's messages) and what is wrong with it. */
export interface AdmissionProblem {
  field?: string;
  message: string;
}

export interface AdmissionVerdict {
  errors: AdmissionProblem[];
  /** Shown to the client (kubectl prints them as "Warning: ..."); never a refusal. */
  warnings: string[];
}

export type AdmissionCheck = (request: AdmissionRequest) => AdmissionVerdict | Promise<AdmissionVerdict>;

const keyOf = (group: string, kind: string) => `${group}/${kind}`;

/** The checks of one target's kinds, by API group and kind. */
export class AdmissionChecks {
  private readonly checks = new Map<string, AdmissionCheck>();

  register(group: string, kind: string, check: AdmissionCheck): void {
    this.checks.set(keyOf(group, kind), check);
  }

  find(group: string, kind: string): AdmissionCheck | undefined {
    return this.checks.get(keyOf(group, kind));
  }

  get size(): number {
    return this.checks.size;
  }
}

// The API server shows status.message to the user; a very long one only hides the first problem.
const MAX_MESSAGE = 4096;
// Each warning is limited to 256 characters by kubectl's display, and the API server drops more
// than a few dozen; the first ones carry the point.
const MAX_WARNING = 256;
const MAX_WARNINGS = 20;

export function describeProblem(p: AdmissionProblem): string {
  return p.field ? `${p.field}: ${p.message}` : p.message;
}

/** `VaultSeed ns/a` (or `OpenBaoCluster a`), for messages that name the object. */
export function objectOf(request: AdmissionRequest): string {
  const name = request.name || nameIn(request.object) || "(unnamed)";
  return `${request.kind.kind} ${request.namespace ? `${request.namespace}/` : ""}${name}`;
}

function nameIn(object: unknown): string | undefined {
  const meta = (object as { metadata?: { name?: unknown; generateName?: unknown } } | null)?.metadata;
  if (typeof meta?.name === "string") return meta.name;
  return typeof meta?.generateName === "string" ? `${meta.generateName}*` : undefined;
}

const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/**
 * What an update may keep: Kubernetes ratchets CRD validation (a field left as stored is not
 * re-judged), and so does this. An object being deleted is admitted (its finalizers must be able to
 * go, whatever its spec says), and an update that leaves `spec` as stored (a label, an annotation, a
 * finalizer: what controllers write) turns the refusals of `spec` into warnings, so an object
 * stored before a check existed, or before it got stricter, is not frozen. Metadata is judged as sent.
 */
export function ratchet(request: AdmissionRequest, verdict: AdmissionVerdict): AdmissionVerdict {
  if (request.operation !== "UPDATE" || verdict.errors.length === 0) return verdict;
  const deleting = [request.object, request.oldObject].some(
    (o) => (o as { metadata?: { deletionTimestamp?: unknown } } | null)?.metadata?.deletionTimestamp,
  );
  const specUnchanged = deepEqual(specOf(request.object), specOf(request.oldObject));
  if (!deleting && !specUnchanged) return verdict;
  const kept: AdmissionProblem[] = [];
  const warnings = [...verdict.warnings];
  const why = deleting ? "admitted while the object is being deleted" : "admitted: spec is unchanged";
  for (const p of verdict.errors) {
    if (deleting || !p.field?.startsWith("metadata")) warnings.push(`${describeProblem(p)} (${why})`);
    else kept.push(p);
  }
  return { errors: kept, warnings };
}

const specOf = (o: unknown) => (o as { spec?: unknown } | null)?.spec;

export interface ReviewOptions {
  /** Refusals become warnings: what would be refused is shown and admitted (rolling a webhook out). */
  observeOnly?: boolean;
}

/**
 * The AdmissionReview response for `verdict`: allowed without errors, else refused with one message
 * that names the object and every field; in observe-only mode the refusals are warnings instead.
 */
export function reviewResponse(
  request: AdmissionRequest,
  verdict: AdmissionVerdict,
  options: ReviewOptions = {},
): Record<string, unknown> {
  const object = objectOf(request);
  const refused = verdict.errors.length > 0;
  const warnings = [...verdict.warnings];
  if (refused && options.observeOnly)
    for (const e of verdict.errors) warnings.push(`would be refused (observe-only): ${describeProblem(e)}`);
  const response: Record<string, unknown> = {
    uid: request.uid,
    allowed: !refused || options.observeOnly === true,
  };
  if (warnings.length > 0)
    response["warnings"] = warnings.slice(0, MAX_WARNINGS).map((w) => clip(`${object}: ${w}`, MAX_WARNING));
  if (refused && !options.observeOnly)
    response["status"] = {
      code: 422,
      reason: "Invalid",
      message: clip(`${object} is invalid: ${verdict.errors.map(describeProblem).join("; ")}`, MAX_MESSAGE),
    };
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response };
}

/** Reads an AdmissionReview v1 body; a string says what is wrong with it. */
export function parseReview(body: unknown): AdmissionRequest | string {
  const review = body as { apiVersion?: unknown; kind?: unknown; request?: Record<string, unknown> } | null;
  if (review?.kind !== "AdmissionReview" || review.apiVersion !== "admission.k8s.io/v1")
    return "expected an AdmissionReview of admission.k8s.io/v1";
  const r = review.request;
  const kind = r?.["kind"] as AdmissionRequest["kind"] | undefined;
  if (!r || typeof r["uid"] !== "string" || typeof kind?.kind !== "string" || typeof kind.group !== "string")
    return "the AdmissionReview has no request with uid and kind";
  const out: AdmissionRequest = {
    uid: r["uid"],
    kind: { group: kind.group, version: String(kind.version ?? ""), kind: kind.kind },
    operation: r["operation"] as AdmissionRequest["operation"],
    object: r["object"] ?? undefined,
    oldObject: r["oldObject"] ?? undefined,
    dryRun: r["dryRun"] === true,
  };
  if (typeof r["name"] === "string" && r["name"] !== "") out.name = r["name"];
  if (typeof r["namespace"] === "string" && r["namespace"] !== "") out.namespace = r["namespace"];
  return out;
}
