/**
 * The webhook's serving certificate without cert-manager: the operator's own CA and a leaf for the
 * webhook Service's names, kept in one Secret (so every replica serves a leaf of the same CA), and
 * the CA put into the ValidatingWebhookConfiguration's caBundle (the API server trusts nothing
 * else for a webhook). Renewed before expiry: the leaf when it nears its end; the CA too when it
 * does, with the old CA left in the bundle while leaves it signed may still be served.
 */
import { X509Certificate } from "node:crypto";
import { SECRET, VALIDATING_WEBHOOK_CONFIGURATION } from "./builtin-types.js";
import type { KubeClient } from "./client.js";
import { isConflict, isNotFound } from "./errors.js";
import type { Logger } from "./log.js";
import { createCertificateAuthority, issueServerCertificate } from "./pki/x509.js";
import type { KubeObject } from "./types.js";
import type { ServingCertificate } from "./webhook-server.js";

const DAY = 86_400_000;
export const DEFAULT_CA_VALIDITY_MS = 3650 * DAY;
export const DEFAULT_LEAF_VALIDITY_MS = 90 * DAY;
/** Renewed once less than a third of its life is left: weeks of margin for a 90-day leaf. */
const RENEW_AT_FRACTION = 1 / 3;

export interface WebhookCertificateOptions {
  client: KubeClient;
  namespace: string;
  secretName: string;
  /** The names the API server dials: the Service's DNS names, or 127.0.0.1 for a URL webhook. */
  names: string[];
  /** The ValidatingWebhookConfiguration whose caBundle is kept current; undefined: none to patch. */
  webhookConfiguration?: string;
  caValidityMs?: number;
  leafValidityMs?: number;
  log: Logger;
  now?: () => Date;
}

interface Stored {
  caCert: string;
  caKey: string;
  /** CAs retired by a CA renewal, kept in the bundle while they are valid. */
  previousCas: string;
  cert: string;
  key: string;
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const unb64 = (s: unknown) => (typeof s === "string" ? Buffer.from(s, "base64").toString("utf8") : "");

export class WebhookCertificates {
  private current?: Stored;

  constructor(private readonly opts: WebhookCertificateOptions) {}

  private now(): Date {
    return this.opts.now?.() ?? new Date();
  }

  /** The leaf and key being served. */
  get serving(): ServingCertificate | undefined {
    return this.current && { certPem: this.current.cert, keyPem: this.current.key };
  }

  /** The PEM bundle the API server must trust: the CA and any retired CA still valid. */
  get caBundle(): string {
    if (!this.current) return "";
    return [this.current.caCert, ...splitPem(this.current.previousCas)].join("");
  }

  /**
   * Reads the Secret, renews what is due (or everything, if missing or unreadable), writes it back
   * and patches the caBundle. Returns true when the served certificate changed. `force` issues a
   * new leaf now (a rotation on demand).
   */
  async ensure(force = false): Promise<boolean> {
    const { client, namespace, secretName } = this.opts;
    for (let attempt = 0; ; attempt++) {
      const secret = await client.getOrUndefined(SECRET, secretName, namespace);
      const stored = secret ? readSecret(secret) : undefined;
      const next = this.renewed(stored, force && attempt === 0);
      try {
        if (next !== stored) await this.write(secret, next!);
      } catch (e) {
        // Another replica wrote first: take what it wrote (its CA is as good as ours).
        if ((isConflict(e) || isNotFound(e)) && attempt < 3) continue;
        throw e;
      }
      const changed = this.current?.cert !== next!.cert;
      this.current = next!;
      await this.patchBundle();
      return changed;
    }
  }

  /** `stored` itself when nothing is due, else the renewed set. */
  private renewed(stored: Stored | undefined, force: boolean): Stored | undefined {
    const now = this.now();
    const caValidity = this.opts.caValidityMs ?? DEFAULT_CA_VALIDITY_MS;
    const leafValidity = this.opts.leafValidityMs ?? DEFAULT_LEAF_VALIDITY_MS;
    let ca = stored && { certPem: stored.caCert, keyPem: stored.caKey };
    let previous = stored?.previousCas ?? "";
    if (!ca || due(ca.certPem, now, caValidity)) {
      if (ca) previous = ca.certPem;
      ca = createCertificateAuthority("platform-operator webhook CA", now, caValidity);
    }
    previous = splitPem(previous)
      .filter((pem) => !expired(pem, now))
      .join("");
    const leafOk =
      stored &&
      ca.certPem === stored.caCert &&
      !force &&
      !due(stored.cert, now, leafValidity) &&
      coversNames(stored.cert, this.opts.names);
    if (leafOk) return stored;
    const leaf = issueServerCertificate(ca, {
      commonName: this.opts.names[0] ?? "platform-operator-webhook",
      names: this.opts.names,
      now,
      validityMs: leafValidity,
    });
    return {
      caCert: ca.certPem,
      caKey: ca.keyPem,
      previousCas: previous,
      cert: leaf.certPem,
      key: leaf.keyPem,
    };
  }

  private async write(secret: KubeObject | undefined, s: Stored): Promise<void> {
    const data = {
      "ca.crt": b64(s.caCert),
      "ca.key": b64(s.caKey),
      "previous-ca.crt": b64(s.previousCas),
      "tls.crt": b64(s.cert),
      "tls.key": b64(s.key),
    };
    const { client, namespace, secretName } = this.opts;
    if (!secret) {
      await client.create(SECRET, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: secretName,
          namespace,
          labels: { "app.kubernetes.io/part-of": "platform-operator" },
        },
        type: "Opaque",
        data,
      });
    } else {
      // The resourceVersion makes this a compare-and-swap: a replica that renewed in between wins.
      await client.replace(SECRET, { ...secret, data });
    }
    this.opts.log.info({ secretName: `${namespace}/${secretName}` }, "webhook serving certificate issued");
  }

  private async patchBundle(): Promise<void> {
    const name = this.opts.webhookConfiguration;
    if (!name) return;
    const bundle = b64(this.caBundle);
    const vwc = await this.opts.client.getOrUndefined(VALIDATING_WEBHOOK_CONFIGURATION, name);
    if (!vwc) {
      this.opts.log.warn({ webhookConfiguration: name }, "webhook configuration not found: caBundle not set");
      return;
    }
    const webhooks = (vwc["webhooks"] as { clientConfig?: { caBundle?: string } }[] | undefined) ?? [];
    if (webhooks.every((w) => w.clientConfig?.caBundle === bundle)) return;
    const ops = webhooks.map((_, i) => ({
      op: "add",
      path: `/webhooks/${i}/clientConfig/caBundle`,
      value: bundle,
    }));
    // The test op makes it apply only to the list as read: a concurrent edit retries on next ensure.
    await this.opts.client.jsonPatch(VALIDATING_WEBHOOK_CONFIGURATION, name, undefined, [
      { op: "test", path: "/metadata/resourceVersion", value: vwc.metadata.resourceVersion },
      ...ops,
    ]);
  }
}

function readSecret(secret: KubeObject): Stored | undefined {
  const data = (secret["data"] as Record<string, unknown> | undefined) ?? {};
  const s: Stored = {
    caCert: unb64(data["ca.crt"]),
    caKey: unb64(data["ca.key"]),
    previousCas: unb64(data["previous-ca.crt"]),
    cert: unb64(data["tls.crt"]),
    key: unb64(data["tls.key"]),
  };
  try {
    new X509Certificate(s.caCert);
    new X509Certificate(s.cert);
  } catch {
    return undefined; // unreadable: issued anew
  }
  return s.caKey && s.key ? s : undefined;
}

function splitPem(pems: string): string[] {
  return pems.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/g) ?? [];
}

function expired(pem: string, now: Date): boolean {
  try {
    return Date.parse(new X509Certificate(pem).validTo) <= now.getTime();
  } catch {
    return true;
  }
}

/** Less than a third of the validity left (or the certificate unreadable). */
function due(pem: string, now: Date, validityMs: number): boolean {
  try {
    const left = Date.parse(new X509Certificate(pem).validTo) - now.getTime();
    return left < validityMs * RENEW_AT_FRACTION;
  } catch {
    return true;
  }
}

function coversNames(pem: string, names: string[]): boolean {
  const san = new X509Certificate(pem).subjectAltName ?? "";
  const have = new Set(san.split(", ").map((e) => e.replace(/^(DNS|IP Address):/, "")));
  return names.every((n) => have.has(n));
}
