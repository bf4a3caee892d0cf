import { createHash } from "node:crypto";
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { secretValue } from "../../../runtime/secrets.js";
import { BaoRequestError } from "../baoclient/client.js";
import { refOf } from "../cluster-ref.js";
import { clusterNames } from "../identity.js";
import type { ServiceContext } from "../services.js";
import type { PassResult } from "../status.js";
import { ROOT_TOKEN_KEY } from "../workload/init/init.js";

/**
 * The root token the operator keeps in `<name>-root-token` is the operator's own access to OpenBao
 * (Autopilot settings, Raft peer removal). It can die without the Secret changing: a restore brings
 * back the source cluster's token store, where this cluster's token does not exist. OpenBao then
 * answers 403 to every call. Once it did, the token is set aside (by a fingerprint, never the value)
 * until the Secret holds another one: Degraded=True RootTokenRefused while it lasts (its transition
 * is the one Warning event), one log line, and no call with a token known to be refused.
 */
export class RootTokenRefusals {
  private readonly refused = new Map<string, string>();

  isRefused(key: string, token: string): boolean {
    return this.refused.get(key) === fingerprint(token);
  }

  /** True the first time this token is refused for this cluster. */
  remember(key: string, token: string): boolean {
    const fp = fingerprint(token);
    if (this.refused.get(key) === fp) return false;
    this.refused.set(key, fp);
    return true;
  }

  forget(key: string): void {
    this.refused.delete(key);
  }
}

/** What the functions below need of the steps' dependencies (StepDeps carries it). */
export interface RootTokenDeps {
  rootTokenRefusals?: RootTokenRefusals;
}

const fingerprint = (token: string): string => createHash("sha256").update(token).digest("hex");

const keyOf = (c: OpenBaoCluster): string => `${c.metadata.namespace}/${c.metadata.name}`;

/** What the condition and the event say; names the Secret, never its value. */
export function refusedMessage(cluster: OpenBaoCluster): string {
  const secret = clusterNames(refOf(cluster)).rootTokenSecret;
  return `OpenBao refuses the token in Secret ${secret} (HTTP 403): it is not a token of the data OpenBao now holds (after a restore that data carries the source cluster's tokens). Put a token valid there (e.g. the source cluster's root token) into Secret ${secret}, key "${ROOT_TOKEN_KEY}"; Autopilot settings and Raft peer removal wait until then`;
}

/**
 * The root token the operator may use: undefined when the Secret has none, or when OpenBao already
 * refused this very token (then `result`, when given, carries the refusal for the status).
 */
export async function usableRootToken(
  deps: RootTokenDeps,
  cluster: OpenBaoCluster,
  ctx: ServiceContext,
  result?: PassResult,
): Promise<string | undefined> {
  const token = await secretValue(
    ctx.reader,
    cluster.metadata.namespace!,
    clusterNames(refOf(cluster)).rootTokenSecret,
    ROOT_TOKEN_KEY,
  );
  if (!token) return undefined;
  if (deps.rootTokenRefusals?.isRefused(keyOf(cluster), token)) {
    if (result) result.rootTokenRefused = refusedMessage(cluster);
    return undefined;
  }
  // A token that is not (or no longer) refused: whatever was remembered is about another one.
  deps.rootTokenRefusals?.forget(keyOf(cluster));
  return token;
}

/**
 * After a call with the root token failed: a 403 means OpenBao does not know the token. Records it
 * and returns true; any other failure returns false and records nothing. The event is the Degraded
 * condition's own (one Warning `RootTokenRefused` when it turns True), not one per call.
 */
export function noteRootTokenFailure(
  deps: RootTokenDeps,
  cluster: OpenBaoCluster,
  ctx: ServiceContext,
  token: string,
  err: unknown,
  result?: PassResult,
): boolean {
  if (!(err instanceof BaoRequestError) || err.status !== 403) return false;
  if (result) result.rootTokenRefused = refusedMessage(cluster);
  if (deps.rootTokenRefusals?.remember(keyOf(cluster), token))
    ctx.log.warn(
      { secret: clusterNames(refOf(cluster)).rootTokenSecret },
      "OpenBao refuses the root token (HTTP 403); not using it again until the Secret changes",
    );
  return true;
}
