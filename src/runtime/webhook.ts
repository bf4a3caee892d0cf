/**
 * The validating webhook of a process: its HTTPS server and its serving certificate, either the
 * operator's own (a CA and leaf in a Secret, renewed on a timer, caBundle patched) or files
 * mounted from a cert-manager Secret (re-read on a timer; cert-manager's CA injector keeps the
 * caBundle). The checks are looked up per request, so a kind is checked only while its target runs.
 */
import { readFileSync } from "node:fs";
import type { AdmissionCheck } from "./admission.js";
import type { KubeClient } from "./client.js";
import type { Logger } from "./log.js";
import { WebhookCertificates } from "./webhook-certs.js";
import { type ServingCertificate, WebhookServer } from "./webhook-server.js";

export type WebhookCertificateSource =
  | {
      kind: "secret";
      namespace: string;
      secretName: string;
      names: string[];
      webhookConfiguration?: string;
      caValidityMs?: number;
      leafValidityMs?: number;
    }
  | { kind: "files"; certFile: string; keyFile: string };

export interface WebhookOptions {
  port: number;
  host: string;
  observeOnly: boolean;
  certificate: WebhookCertificateSource;
  /** How often the certificate is looked at (renewed, or re-read); default one hour. */
  checkEveryMs?: number;
  client: KubeClient;
  log: Logger;
  checkFor: (group: string, kind: string) => AdmissionCheck | undefined;
}

const DEFAULT_CHECK_EVERY_MS = 3_600_000;

export class Webhook {
  private server?: WebhookServer;
  private certs?: WebhookCertificates;
  private timer?: NodeJS.Timeout;
  private lastError?: string;

  constructor(private readonly opts: WebhookOptions) {}

  get port(): number {
    return this.server?.port ?? 0;
  }

  get certificates(): WebhookCertificates | undefined {
    return this.certs;
  }

  async start(): Promise<void> {
    const first = await this.loadCertificate();
    this.server = new WebhookServer({
      port: this.opts.port,
      host: this.opts.host,
      certificate: first,
      checkFor: this.opts.checkFor,
      observeOnly: this.opts.observeOnly,
      log: this.opts.log,
    });
    await this.server.start();
    const every = this.opts.checkEveryMs ?? DEFAULT_CHECK_EVERY_MS;
    this.timer = setInterval(() => void this.refresh(), every);
    this.timer.unref();
    this.opts.log.info(
      { port: this.server.port, observeOnly: this.opts.observeOnly },
      "admission webhook serving",
    );
  }

  /** Renews (or re-reads) the certificate now; `force` issues a new leaf even if not due. */
  async refresh(force = false): Promise<void> {
    try {
      const next = await this.loadCertificate(force);
      this.server?.setCertificate(next);
      this.lastError = undefined;
    } catch (e) {
      // The old certificate is still served; the next round tries again, /readyz says why meanwhile.
      this.lastError = (e as Error).message;
      this.opts.log.error({ err: this.lastError }, "webhook certificate renewal failed");
    }
  }

  private async loadCertificate(force = false): Promise<ServingCertificate> {
    const source = this.opts.certificate;
    if (source.kind === "files")
      return { certPem: readFileSync(source.certFile, "utf8"), keyPem: readFileSync(source.keyFile, "utf8") };
    this.certs ??= new WebhookCertificates({
      client: this.opts.client,
      namespace: source.namespace,
      secretName: source.secretName,
      names: source.names,
      webhookConfiguration: source.webhookConfiguration,
      caValidityMs: source.caValidityMs,
      leafValidityMs: source.leafValidityMs,
      log: this.opts.log,
    });
    await this.certs.ensure(force);
    return this.certs.serving!;
  }

  readinessProblems(): string[] {
    if (!this.server?.listening) return ["admission webhook: not serving"];
    return this.lastError ? [`admission webhook: certificate renewal failed: ${this.lastError}`] : [];
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.server?.stop();
    this.server = undefined;
  }
}
