/**
 * spec.recoveryKeys.initial: the recovery keys of an auto-unsealed cluster, made once by OpenBao's
 * self-initialization (upstream 0.4's meaning). Rendered as its own `initialize` stanza calling
 * `sys/rotate/recovery/init` with one PGP key per share, in recipient order, so OpenBao encrypts each
 * share to its recipient and keeps the encrypted shares as a backup in its storage (`backup`): no
 * share is ever in plain text where the operator or Kubernetes could read it. The CRD already refuses
 * it without self-init or with the static seal; what only the renderer can see is checked here.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { ConfigError } from "./errors.js";
import { attrs, block, type HclNode } from "./hcl.js";

/** The stanza's and its request's names, as upstream renders them. */
export const RECOVERY_KEYS_BLOCK = "initial-recovery-keys";
export const RECOVERY_KEYS_REQUEST = "create-initial-recovery-keys";
const RECOVERY_INIT_PATH = "sys/rotate/recovery/init";

/** True for a self-init request that would initialize the recovery keys by hand. */
export const isRecoveryInitPath = (path: unknown): boolean =>
  typeof path === "string" && path.replace(/^\/+|\/+$/g, "") === RECOVERY_INIT_PATH;

/** The initialize stanza for spec.recoveryKeys.initial, or undefined when none is asked for. */
export function recoveryKeysBlock(cluster: OpenBaoCluster): HclNode | undefined {
  const initial = cluster.spec.recoveryKeys?.initial;
  if (!initial) return undefined;
  const field = "recoveryKeys.initial";
  const type = cluster.spec.unseal?.type ?? "static";
  if (!cluster.spec.selfInit?.enabled) throw new ConfigError(field, "needs selfInit.enabled: true");
  if (type === "static") throw new ConfigError(field, "needs an auto-unseal (unseal.type other than static)");
  (cluster.spec.selfInit.requests ?? []).forEach((r, i) => {
    if (isRecoveryInitPath(r.path))
      throw new ConfigError(
        `selfInit.requests[${i}].path`,
        `${RECOVERY_INIT_PATH} is what spec.recoveryKeys.initial renders; give one or the other`,
      );
  });
  const recipients = initial.recipients ?? [];
  if (initial.threshold > initial.shares)
    throw new ConfigError(`${field}.threshold`, "may not exceed shares");
  if (recipients.length !== initial.shares)
    throw new ConfigError(`${field}.recipients`, `needs exactly ${initial.shares} entries, one per share`);
  const keys = recipients.map((r, i) => {
    const key = r.pgpPublicKey?.trim();
    if (!key) throw new ConfigError(`${field}.recipients[${i}].pgpPublicKey`, "must not be empty");
    return key;
  });
  return block(
    "initialize",
    [RECOVERY_KEYS_BLOCK],
    [
      block(
        "request",
        [RECOVERY_KEYS_REQUEST],
        [
          ...attrs({ operation: "update", path: RECOVERY_INIT_PATH }, field),
          block(
            "data",
            [],
            attrs(
              {
                secret_shares: initial.shares,
                secret_threshold: initial.threshold,
                backup: true,
                pgp_keys: keys,
              },
              field,
            ),
          ),
        ],
      ),
    ],
  );
}
