import {
  OpenBaoClusterReason,
  type OpenBaoClusterReasonType,
} from "../../../../apis/openbaocluster-names.js";
import { SECRET } from "../../../../runtime/builtin-types.js";
import { errorMessage } from "../../../../runtime/errors.js";
import { createCertificateAuthority, issueServerCertificate } from "../../../../runtime/pki/x509.js";
import type { KubeObject } from "../../../../runtime/types.js";
import { applyOwned, type ServiceContext, type ServiceOutcome } from "../service-context.js";
import { hideCertificateExpiry, showCertificateExpiry, tlsRotations } from "./metrics.js";
import { parseCertificates } from "./pem.js";
import {
  caValidityMs,
  certificateHash,
  clusterRef,
  leafValidityMs,
  nextBundle,
  planCa,
  planLeaf,
  requiredExternalNames,
  type StoredCa,
  serverNames,
  type TlsCluster,
  tlsSettings,
} from "./plan.js";
import { caSecretIntent, secretText, serverSecretIntent } from "./secrets.js";
import { validateServerMaterial } from "./validate.js";

/** Condition type and reasons this service reports (upstream's names where they exist). */
export const TLS_READY = "TLSReady";
export const TlsReason = {
  OperatorManaged: OpenBaoClusterReason.OperatorManagedTLS,
  Ready: OpenBaoClusterReason.Ready,
  Disabled: OpenBaoClusterReason.Disabled,
  Missing: OpenBaoClusterReason.TLSSecretMissing,
  Invalid: OpenBaoClusterReason.TLSSecretInvalid,
  InvalidSpec: OpenBaoClusterReason.InvalidSpec,
} as const;

function outcome(
  ready: boolean,
  reason: OpenBaoClusterReasonType,
  message: string,
  activeCertHash?: string,
): ServiceOutcome {
  return {
    ready,
    reason,
    message,
    condition: { type: TLS_READY, status: ready ? "True" : "False", reason, message },
    ...(activeCertHash ? { activeCertHash } : {}),
  };
}

/**
 * The certificate service: creates and rotates (OperatorManaged), or waits for and validates
 * (External), the listener's TLS Secrets, and reports the active leaf's hash. ACME and disabled TLS
 * need no Secrets. Never writes key material anywhere but the Secrets themselves.
 */
export async function reconcileCertificates(
  ctx: ServiceContext,
  cluster: TlsCluster,
): Promise<ServiceOutcome> {
  let settings: ReturnType<typeof tlsSettings>;
  try {
    settings = tlsSettings(cluster);
  } catch (e) {
    return outcome(false, TlsReason.InvalidSpec, errorMessage(e));
  }
  if (!settings.enabled || settings.mode === "ACME") hideCertificateExpiry(clusterRef(cluster));
  if (!settings.enabled)
    return outcome(true, TlsReason.Disabled, "TLS is disabled (spec.tls.enabled: false)");
  if (settings.mode === "ACME")
    return outcome(true, TlsReason.Ready, "ACME: OpenBao obtains and renews its own certificates");
  if (settings.mode === "External") return external(ctx, cluster, settings);
  return operatorManaged(ctx, cluster, settings);
}

async function readSecret(
  ctx: ServiceContext,
  namespace: string,
  name: string,
): Promise<KubeObject | undefined> {
  return ctx.reader.get(SECRET, name, namespace);
}

async function external(
  ctx: ServiceContext,
  cluster: TlsCluster,
  settings: ReturnType<typeof tlsSettings>,
): Promise<ServiceOutcome> {
  const ref = clusterRef(cluster);
  const server = await readSecret(ctx, ref.namespace, settings.serverSecretName);
  const caSecret =
    settings.caSecretName === settings.serverSecretName
      ? server
      : await readSecret(ctx, ref.namespace, settings.caSecretName);
  const missing: string[] = [];
  if (!server) missing.push(`Secret ${settings.serverSecretName}`);
  const certPem = secretText(server, "tls.crt");
  const keyPem = secretText(server, "tls.key");
  const caPem =
    secretText(server, "ca.crt") ?? secretText(caSecret, "ca.crt") ?? secretText(caSecret, "tls.crt");
  if (server && !certPem) missing.push(`tls.crt in Secret ${settings.serverSecretName}`);
  if (server && !keyPem) missing.push(`tls.key in Secret ${settings.serverSecretName}`);
  if (!caPem)
    missing.push(
      caSecret
        ? `ca.crt in Secret ${settings.caSecretName} or ${settings.serverSecretName}`
        : `Secret ${settings.caSecretName} (or ca.crt in ${settings.serverSecretName})`,
    );
  if (missing.length > 0 || !certPem || !keyPem || !caPem) {
    const message = `waiting for ${missing.join(", ")} (spec.tls.mode External)`;
    warn(ctx, TlsReason.Missing, message);
    return outcome(false, TlsReason.Missing, message);
  }
  const problems = validateServerMaterial(
    { certPem, keyPem, caPem },
    { requiredNames: requiredExternalNames(cluster), now: ctx.now() },
  );
  if (problems.length > 0) {
    const message = `Secret ${settings.serverSecretName}: ${problems.join("; ")}`;
    warn(ctx, TlsReason.Invalid, message);
    return outcome(false, TlsReason.Invalid, message);
  }
  showCertificateExpiry(ref, "External", certPem);
  // Valid now; it stops being valid at its notAfter, which a pass must see without an event.
  const validTo = parseCertificates(certPem)?.[0]?.validTo;
  return {
    ...outcome(
      true,
      TlsReason.Ready,
      `Secret ${settings.serverSecretName} is valid`,
      certificateHash(certPem, keyPem),
    ),
    ...(validTo ? { recheckAt: Date.parse(validTo) } : {}),
  };
}

function warn(ctx: ServiceContext, reason: OpenBaoClusterReasonType, note: string): void {
  ctx.events.record(ctx.owner, { type: "Warning", reason, action: "ValidateTLS", note });
}

async function operatorManaged(
  ctx: ServiceContext,
  cluster: TlsCluster,
  settings: ReturnType<typeof tlsSettings>,
): Promise<ServiceOutcome> {
  const ref = clusterRef(cluster);
  const now = ctx.now();
  const changes: string[] = [];
  const apply = (intent: KubeObject, live: KubeObject | undefined) =>
    applyOwned(ctx, intent, changes, live ?? null);
  // Observe-only issues nothing: no event says a certificate was issued when none was stored.
  const announce = (e: Parameters<ServiceContext["events"]["record"]>[1]) => {
    if (!ctx.observeOnly) ctx.events.record(ctx.owner, e);
  };

  const caLive = await readSecret(ctx, ref.namespace, settings.caSecretName);
  const stored: StoredCa | undefined = caLive
    ? {
        certPem: secretText(caLive, "tls.crt") ?? "",
        keyPem: secretText(caLive, "tls.key") ?? "",
        bundlePem: secretText(caLive, "ca.crt") ?? secretText(caLive, "tls.crt") ?? "",
      }
    : undefined;
  const caPlan = planCa(stored, settings.rotationMs, now);
  let ca: StoredCa;
  if (caPlan.action === "keep" && stored) {
    ca = stored;
  } else {
    const fresh = createCertificateAuthority(
      `${ref.name}.${ref.namespace} OpenBao CA`,
      now,
      caValidityMs(settings.rotationMs),
    );
    ca = { ...fresh, bundlePem: nextBundle(fresh.certPem, stored?.bundlePem, now) };
    ctx.log.info(
      { reason: caPlan.reason, secret: settings.caSecretName, observeOnly: !!ctx.observeOnly },
      "issuing a new OpenBao CA",
    );
    announce({
      type: "Normal",
      reason: OpenBaoClusterReason.CAIssued,
      action: "IssueCertificate",
      note: `new CA in Secret ${settings.caSecretName}: ${caPlan.reason}`,
    });
  }
  await apply(caSecretIntent(ref, settings.caSecretName, ca), caLive);

  const leafLive = await readSecret(ctx, ref.namespace, settings.serverSecretName);
  const storedLeaf = leafLive
    ? {
        certPem: secretText(leafLive, "tls.crt") ?? "",
        keyPem: secretText(leafLive, "tls.key") ?? "",
        caPem: secretText(leafLive, "ca.crt") ?? "",
      }
    : undefined;
  const names = serverNames(cluster, settings);
  const leafPlan = planLeaf(storedLeaf, ca, ca.bundlePem, names, settings.rotationMs, now);
  let leaf: { certPem: string; keyPem: string; caPem: string };
  if (leafPlan.action === "keep" && storedLeaf) {
    leaf = storedLeaf;
  } else {
    const issued = issueServerCertificate(ca, {
      commonName: `${ref.name}.${ref.namespace}.svc`,
      names,
      now,
      validityMs: leafValidityMs(settings.rotationMs),
    });
    leaf = { ...issued, caPem: ca.bundlePem };
    ctx.log.info(
      { reason: leafPlan.reason, secret: settings.serverSecretName },
      "issuing a new OpenBao server certificate",
    );
    if (!ctx.observeOnly) tlsRotations.inc({ namespace: ref.namespace, name: ref.name });
    announce({
      type: "Normal",
      reason: OpenBaoClusterReason.CertificateIssued,
      action: "IssueCertificate",
      note: `new server certificate in Secret ${settings.serverSecretName}: ${leafPlan.reason}`,
    });
  }
  await apply(serverSecretIntent(ref, settings.serverSecretName, leaf), leafLive);
  // Observe-only wrote nothing: the active leaf is still the stored one.
  const active = ctx.observeOnly ? storedLeaf : leaf;
  showCertificateExpiry(ref, "OperatorManaged", active?.certPem);
  // What was kept is due again at a known time; what was just issued is looked at again by the
  // pass its Secret's write wakes.
  const due = [caPlan.dueAt, leafPlan.dueAt].filter((t): t is number => t !== undefined);
  return {
    ...(due.length > 0 ? { recheckAt: Math.min(...due) } : {}),
    ...outcome(
      true,
      TlsReason.OperatorManaged,
      `CA ${settings.caSecretName} and server certificate ${settings.serverSecretName} are current`,
      active?.certPem ? certificateHash(active.certPem, active.keyPem) : undefined,
    ),
    changes,
  };
}
