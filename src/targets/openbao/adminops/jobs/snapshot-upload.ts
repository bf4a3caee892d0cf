import type { BackupTarget, OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { OpenBaoClusterManagers } from "../../../../apis/openbaocluster-names.js";
import { SERVICE_ACCOUNT } from "../../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../../runtime/client.js";
import { refOf } from "../../cluster-ref.js";
import type { ExecutorAuth, ExecutorJob } from "../../executor/contract.js";
import { API_PORT, type ComponentName, clusterLabels, clusterNames } from "../../identity.js";
import { tlsEnabled, tlsSecretName } from "../../workload/statefulsets/build.js";
import { workloadIdentityOf } from "./workload-identity.js";

/**
 * What every flow that uploads a Raft snapshot hands the executor (the scheduled backup and the
 * pre-upgrade snapshot): the same OpenBao address, CA, store fields and auth shape, so a snapshot
 * Job behaves the same whoever starts it. Only the key, the auth source and the ServiceAccount differ.
 */

/** Field manager of the objects the AdminOps flows create (Jobs, their ServiceAccounts). */
export const ADMINOPS_OBJECTS_MANAGER = OpenBaoClusterManagers.adminOps;

/** A spec section that names how a Job logs in: spec.backup or spec.upgrade. */
export interface AuthSource {
  jwtAuthRole?: string;
  tokenSecretRef?: { name?: string };
}

/**
 * The executor's login from one spec section: its JWT role first (its projected token carrying
 * `audience`, the target's openBaoAudience), else its token Secret.
 */
export function executorAuth(src: AuthSource | undefined, audience: string): ExecutorAuth | undefined {
  const role = src?.jwtAuthRole?.trim();
  if (role) return { method: "jwt", role, audience };
  const secret = src?.tokenSecretRef?.name?.trim();
  if (secret) return { method: "token", secretName: secret };
  return undefined;
}

/** The contract of a Job that streams a Raft snapshot from the active node to `key` in `target`. */
export function snapshotUploadContract(
  cluster: OpenBaoCluster,
  target: BackupTarget,
  key: string,
  auth: ExecutorAuth,
): ExecutorJob {
  const ref = refOf(cluster);
  const names = clusterNames(ref);
  const scheme = tlsEnabled(cluster) ? "https" : "http";
  const caSecret = tlsEnabled(cluster) ? tlsSecretName(cluster) : undefined;
  return {
    operation: "backup",
    openbao: {
      address: `${scheme}://${names.activeService}.${ref.namespace}.svc:${API_PORT}`,
      ...(caSecret ? { caSecretName: caSecret } : {}),
    },
    auth,
    store: {
      provider: target.provider ?? "s3",
      bucket: target.provider === "azure" && target.azure?.container ? target.azure.container : target.bucket,
      key,
      endpoint: target.endpoint,
      region: target.region,
      usePathStyle: target.usePathStyle,
      insecureSkipVerify: target.insecureSkipVerify,
      partSize: target.partSize,
      concurrency: target.concurrency,
      roleArn: target.roleArn,
      azureStorageAccount: target.azure?.storageAccount,
      gcsProject: target.gcs?.project,
      credentialsSecretName: target.credentialsSecretRef?.name || undefined,
    },
  };
}

/**
 * The ServiceAccount a snapshot Job runs as (its projected token is what a JWT role binds), owned by
 * the cluster. No API token is mounted from it.
 */
export async function ensureExecutorServiceAccount(
  client: KubeClient,
  cluster: OpenBaoCluster,
  name: string,
  component: ComponentName,
  signal?: AbortSignal,
): Promise<void> {
  const ref = refOf(cluster);
  // Every snapshot Job of a cluster (backup, pre-upgrade) writes to spec.backup.target, so each of
  // its ServiceAccounts carries that target's identity: one answer whoever applies it last.
  const annotations = workloadIdentityOf(cluster.spec.backup?.target).serviceAccountAnnotations;
  await client.apply(
    SERVICE_ACCOUNT,
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: {
        name,
        namespace: ref.namespace,
        labels: clusterLabels(ref, component),
        // Applied by this manager every time: annotations the spec drops are removed.
        ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
        ownerReferences: [
          {
            apiVersion: cluster.apiVersion,
            kind: cluster.kind,
            name: cluster.metadata.name!,
            uid: cluster.metadata.uid!,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      automountServiceAccountToken: false,
    },
    { fieldManager: ADMINOPS_OBJECTS_MANAGER, force: true, signal },
  );
}
