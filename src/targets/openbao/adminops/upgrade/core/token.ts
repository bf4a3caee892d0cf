import type { OpenBaoCluster } from "../../../../../apis/openbaocluster.js";
import { liveReader } from "../../../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../../../runtime/client.js";
import { secretValue } from "../../../../../runtime/secrets.js";
import { refOf } from "../../../cluster-ref.js";
import { clusterNames } from "../../../identity.js";
import { withBootstrapRole } from "../../../oidc-roles.js";
import { describeEmpty, emptyClusterReferences } from "../../../validate/secret-refs.js";
import { ROOT_TOKEN_KEY } from "../../../workload/init/init.js";
import { forgetJwtToken, jwtUpgradeToken } from "./jwt-login.js";
import type { BaoAccess } from "./observe.js";

/**
 * The token for step-down and the Raft reads, in upstream's order: spec.upgrade.tokenSecretRef (key
 * "token"), else a JWT login as spec.upgrade.jwtAuthRole, else the root-token Secret the workload
 * controller stored at init. Undefined when none is there; a JWT login that fails throws its reason,
 * and so does a tokenSecretRef that names nothing (without a JWT role): the root token is not used
 * in place of the token the user meant. Never logged.
 */
export async function upgradeToken(
  client: KubeClient,
  access: BaoAccess,
  cluster: OpenBaoCluster,
  now: () => Date,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const ref = refOf(cluster);
  const named = cluster.spec.upgrade?.tokenSecretRef?.name?.trim();
  if (named) return secretValue(access.reader ?? liveReader(client), ref.namespace, named, "token");
  // spec.selfInit.oidc bootstraps an upgrade role, used when the spec names no login of its own.
  const role = withBootstrapRole(cluster, "upgrade", cluster.spec.upgrade)?.jwtAuthRole?.trim();
  if (role) return jwtUpgradeToken(client, access, cluster, role, now().getTime(), signal);
  const unnamed = emptyClusterReferences(cluster.spec).find(
    (r) => r.field === "spec.upgrade.tokenSecretRef.name",
  );
  if (unnamed) throw new Error(describeEmpty(unnamed));
  return secretValue(
    access.reader ?? liveReader(client),
    ref.namespace,
    clusterNames(ref).rootTokenSecret,
    ROOT_TOKEN_KEY,
  );
}

/**
 * After a failed step: the next pass logs in anew (when it logs in at all), so a token OpenBao stopped
 * honouring (revoked, its policy changed) is not reused until it expires. One login per failed
 * step is cheap next to the backoff between them.
 */
export function forgetUpgradeLogin(cluster: OpenBaoCluster): void {
  forgetJwtToken(cluster);
}
