/**
 * The HTTPS server the API server calls for validating admission: POST /validate with an
 * AdmissionReview, answered with the registered check's verdict. Its own port, HTTPS only (the
 * API server refuses plain HTTP webhooks). The serving certificate can be replaced while it runs
 * (rotation): connections made after the swap get the new one, open ones keep theirs.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import {
  type AdmissionCheck,
  type AdmissionRequest,
  parseReview,
  type ReviewOptions,
  ratchet,
  reviewResponse,
} from "./admission.js";
import { withDate } from "./date-header.js";
import type { Logger } from "./log.js";

/** The API server sends at most ~3 MiB objects, twice on UPDATE; anything larger is not a review. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface ServingCertificate {
  certPem: string;
  keyPem: string;
}

export interface WebhookServerOptions {
  port: number;
  host: string;
  certificate: ServingCertificate;
  /** The check for a kind, or undefined when no running target serves it (the review is refused). */
  checkFor: (group: string, kind: string) => AdmissionCheck | undefined;
  observeOnly?: boolean;
  log: Logger;
}

export class WebhookServer {
  private server?: Server;
  private boundPort = 0;
  private answered = 0;

  constructor(private readonly opts: WebhookServerOptions) {}

  get port(): number {
    return this.boundPort;
  }

  /** Reviews answered since start: a readiness signal for tests and a hint in logs. */
  get reviews(): number {
    return this.answered;
  }

  get listening(): boolean {
    return this.server?.listening === true;
  }

  async start(): Promise<void> {
    const c = this.opts.certificate;
    const server = createServer(
      { cert: c.certPem, key: c.keyPem },
      withDate((req, res) => {
        void this.handle(req, res);
      }),
    );
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.opts.port, this.opts.host, resolve);
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
  }

  /** New connections are served with `certificate` from now on. */
  setCertificate(certificate: ServingCertificate): void {
    this.server?.setSecureContext({ cert: certificate.certPem, key: certificate.keyPem });
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/validate") return plain(res, 404, "not found");
    if (req.method !== "POST") return plain(res, 405, "method not allowed");
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (e) {
      return plain(res, 400, `not a JSON AdmissionReview: ${(e as Error).message}`);
    }
    const request = parseReview(body);
    if (typeof request === "string") return plain(res, 400, request);
    const answer = await this.decide(request);
    this.answered++;
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(answer));
  }

  private async decide(request: AdmissionRequest): Promise<Record<string, unknown>> {
    const options: ReviewOptions = { observeOnly: this.opts.observeOnly === true };
    const check = this.opts.checkFor(request.kind.group, request.kind.kind);
    // A kind the configuration sends here but no running target checks: refused, like a webhook
    // that is down (failurePolicy Fail), never admitted unchecked.
    if (!check)
      return reviewResponse(
        request,
        { errors: [{ message: "no running target of this operator checks this kind" }], warnings: [] },
        {},
      );
    try {
      return reviewResponse(request, ratchet(request, await check(request)), options);
    } catch (e) {
      // No object's content may crash the process: a check that throws refuses, and says why.
      this.opts.log.error({ kind: request.kind.kind, err: (e as Error).message }, "admission check failed");
      return reviewResponse(
        request,
        { errors: [{ message: `the admission check failed: ${(e as Error).message}` }], warnings: [] },
        {},
      );
    }
  }
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`body larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
