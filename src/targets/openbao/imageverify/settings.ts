import { CONFIGMAP, SECRET } from "../../../runtime/builtin-types.js";
import type { CachedReader } from "../../../runtime/cached-reader.js";
import type { KubeObject } from "../../../runtime/types.js";
import { type PullSecret, pullCredentials } from "./pull-secrets.js";
import { parseTrustRoot, type TrustedRootRef, type TrustRoot } from "./trust-root.js";
import type { VerifySettings } from "./verifier.js";

/**
 * The two verification blocks of the spec, read through a view of their own: the schema in
 * apis/openbaocluster.ts is being widened (issuerRegExp, subjectRegExp), and what is read here must
 * not depend on which fields the type knows today.
 */
export type VerificationField = "imageVerification" | "operatorImageVerification";

export interface VerificationView {
  enabled?: boolean;
  failurePolicy?: string;
  ignoreTlog?: boolean;
  publicKey?: string;
  issuer?: string;
  subject?: string;
  issuerRegExp?: string;
  subjectRegExp?: string;
  imagePullSecrets?: { name?: string }[];
}

export type FailurePolicy = "Block" | "Warn";

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** The block when it is enabled; undefined otherwise (nothing is verified). */
export function enabledVerification(spec: unknown, field: VerificationField): VerificationView | undefined {
  const block = (spec as Record<string, unknown> | undefined)?.[field];
  if (typeof block !== "object" || block === null) return undefined;
  const v = block as VerificationView;
  return v.enabled === true ? v : undefined;
}

/** Block unless Warn is asked for, as upstream defaults it. */
export function failurePolicyOf(v: VerificationView): FailurePolicy {
  return v.failurePolicy === "Warn" ? "Warn" : "Block";
}

/** The named pull Secrets, in order; an empty name (upstream's default) names nothing. */
export function pullSecretNames(v: VerificationView): string[] {
  return (v.imagePullSecrets ?? []).map((r) => r?.name ?? "").filter((n) => n !== "");
}

export const TRUSTED_ROOT_KEY = "trusted_root.json";

// The last root read, by its text: a pass re-reads the ConfigMap (a change takes effect at once)
// but parses its certificates only when the text changed.
let lastRoot: { text: string; root: TrustRoot } | undefined;

/** The trusted root the reference names; throws naming the ConfigMap when it is missing or bad. */
export async function readTrustRoot(
  reader: Pick<CachedReader, "get">,
  ref: TrustedRootRef,
): Promise<TrustRoot> {
  const where = `ConfigMap ${ref.namespace}/${ref.name}`;
  const cm = await reader.get<KubeObject & { data?: Record<string, string> }>(
    CONFIGMAP,
    ref.name,
    ref.namespace,
  );
  if (!cm) throw new Error(`the trusted root ${where} does not exist`);
  const text = cm.data?.[TRUSTED_ROOT_KEY];
  if (!text?.trim()) throw new Error(`the trusted root ${where} has no ${TRUSTED_ROOT_KEY} key`);
  if (lastRoot?.text === text) return lastRoot.root;
  const root = parseTrustRoot(text, `${where} ${TRUSTED_ROOT_KEY}`);
  lastRoot = { text, root };
  return root;
}

/**
 * What the verifier needs, with the pull Secrets read (and, for a keyless block, the operator's
 * trusted root); throws naming a Secret or ConfigMap that is missing.
 */
export async function verifySettings(
  ctx: { reader: Pick<CachedReader, "get"> },
  namespace: string,
  field: VerificationField,
  v: VerificationView,
  trustedRoot?: TrustedRootRef,
): Promise<VerifySettings> {
  const secrets: PullSecret[] = [];
  for (const name of pullSecretNames(v)) {
    const s = await ctx.reader.get<KubeObject & { type?: string; data?: Record<string, string> }>(
      SECRET,
      name,
      namespace,
    );
    if (!s) throw new Error(`spec.${field}.imagePullSecrets: Secret ${name} does not exist`);
    secrets.push({ name, ...(s.type ? { type: s.type } : {}), ...(s.data ? { data: s.data } : {}) });
  }
  const out: VerifySettings = { field: `spec.${field}`, ignoreTlog: v.ignoreTlog === true };
  for (const k of ["publicKey", "issuer", "subject", "issuerRegExp", "subjectRegExp"] as const) {
    const value = str(v[k]);
    if (value !== undefined) out[k] = value;
  }
  // The root is read by a keyless block (its CAs) and by any block checking the log (its Rekor
  // keys); a key-based block under ignoreTlog never depends on it, and a block naming no signer at
  // all is told that rather than about the root.
  const keyless = out.issuer || out.subject || out.issuerRegExp || out.subjectRegExp;
  const needsRoot = out.publicKey ? !out.ignoreTlog : Boolean(keyless);
  if (needsRoot && trustedRoot) out.trustRoot = await readTrustRoot(ctx.reader, trustedRoot);
  if (secrets.length > 0) {
    try {
      out.credentials = pullCredentials(secrets);
    } catch (e) {
      throw new Error(`spec.${field}.imagePullSecrets: ${(e as Error).message}`);
    }
  }
  return out;
}
