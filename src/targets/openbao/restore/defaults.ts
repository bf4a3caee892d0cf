/**
 * The real ports of the restore controller: the object store's head (objectstore/, the executor's
 * own providers) and the shared executor Job builder (adminops/jobs/) with the executor contract.
 */
import type { BackupTarget, OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import { OpenBaoRestoreReason } from "../../../apis/openbaorestore-names.js";
import { SERVICE_ACCOUNT } from "../../../runtime/builtin-types.js";
import { liveReader } from "../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../runtime/client.js";
import type { EventRecorder } from "../../../runtime/events.js";
import { ownerReferenceFor } from "../../../runtime/ownership.js";
import { jobOutcome } from "../adminops/backup/result.js";
import { buildExecutorJob } from "../adminops/jobs/build.js";
import { workloadIdentityOf } from "../adminops/jobs/workload-identity.js";
import { refOf } from "../cluster-ref.js";
import type { OpenBaoTargetConfig } from "../config.js";
import { DEFAULT_CONCURRENCY, DEFAULT_PART_SIZE, type ExecutorJob } from "../executor/contract.js";
import { API_PORT, Component, clusterLabels, clusterNames } from "../identity.js";
import { operatorImage } from "../imageverify/check.js";
import type { ImageVerifier } from "../imageverify/verifier.js";
import { credentialsFromFiles } from "../objectstore/credentials.js";
import { platformOf } from "../platform.js";
import { tlsEnabled, tlsSecretName } from "../workload/statefulsets/build.js";
import type { RestoreJobs, SnapshotProbe } from "./ports.js";
import { RESTORE_FIELD_MANAGER } from "./types.js";
import { restoreAuth } from "./validate.js";
import type { RestorePorts } from "./wiring.js";

/** The ServiceAccount restore Jobs run as; an OpenBao JWT role for restores binds to it. */
export const restoreServiceAccount = (cluster: string): string =>
  clusterNames({ name: cluster, namespace: "" }).restoreServiceAccount;

/** Re-exported for the restore tests: one reading of the credentials Secret for every caller. */
export { credentialsFromFiles };

const bucketOf = (t: BackupTarget) =>
  t.provider === "azure" && t.azure?.container ? t.azure.container : t.bucket;

/** Head of the snapshot through the same provider code the executor downloads with. */
export const storeProbe: SnapshotProbe = async (target, key, files) => {
  const { openObjectStore } = await import("../objectstore/index.js");
  const store = await openObjectStore({
    provider: target.provider ?? "s3",
    bucket: bucketOf(target),
    endpoint: target.endpoint,
    region: target.region,
    usePathStyle: target.usePathStyle,
    insecureSkipVerify: target.insecureSkipVerify,
    partSize: target.partSize ?? DEFAULT_PART_SIZE,
    concurrency: target.concurrency ?? DEFAULT_CONCURRENCY,
    azureStorageAccount: target.azure?.storageAccount,
    gcsProject: target.gcs?.project,
    credentials: credentialsFromFiles(target.provider, files),
  });
  const info = await store.head(key);
  return info ? { exists: true, size: info.size } : { exists: false };
};

/** The executor contract of a restore: stream the source object into the cluster's active node. */
export function restoreContract(r: OpenBaoRestore, c: OpenBaoCluster, audience: string): ExecutorJob {
  const ref = refOf(c);
  const t = r.spec.source.target;
  const auth = restoreAuth(r, c);
  if (!auth) throw new Error("no OpenBao authentication: set spec.jwtAuthRole or spec.tokenSecretRef");
  const caSecret = tlsEnabled(c) ? tlsSecretName(c) : undefined;
  return {
    operation: "restore",
    openbao: {
      address: `${tlsEnabled(c) ? "https" : "http"}://${clusterNames(ref).activeService}.${ref.namespace}.svc:${API_PORT}`,
      ...(caSecret ? { caSecretName: caSecret } : {}),
    },
    auth:
      auth.method === "jwt"
        ? { method: "jwt", role: auth.role, audience }
        : { method: "token", secretName: auth.secretName },
    store: {
      provider: t.provider ?? "s3",
      bucket: bucketOf(t),
      key: r.spec.source.key,
      endpoint: t.endpoint,
      region: t.region,
      usePathStyle: t.usePathStyle,
      insecureSkipVerify: t.insecureSkipVerify,
      partSize: t.partSize,
      concurrency: t.concurrency,
      roleArn: t.roleArn,
      azureStorageAccount: t.azure?.storageAccount,
      gcsProject: t.gcs?.project,
      credentialsSecretName: t.credentialsSecretRef?.name || undefined,
    },
    ...(r.spec.force ? { force: true } : {}),
  };
}

/** The executor image a restore names: its own, the cluster's backup image, the target's default. */
function executorImageOf(
  r: OpenBaoRestore,
  c: OpenBaoCluster,
  config: OpenBaoTargetConfig,
): string | undefined {
  return r.spec.image ?? c.spec.backup?.image ?? config.executorImage;
}

/**
 * Restore Jobs run by the executor. With `imageVerifier`, the executor image is verified under the
 * cluster's spec.operatorImageVerification before the Job is made (a Warn is said through `events`).
 */
export function executorRestoreJobs(
  client: KubeClient,
  config: OpenBaoTargetConfig,
  imageVerifier?: ImageVerifier,
  events: Pick<EventRecorder, "record"> = { record: () => {} },
): RestoreJobs {
  return {
    async prepare(r, c, signal) {
      const annotations = workloadIdentityOf(r.spec.source.target).serviceAccountAnnotations;
      await client.apply(
        SERVICE_ACCOUNT,
        {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: {
            name: restoreServiceAccount(c.metadata.name!),
            namespace: c.metadata.namespace,
            labels: clusterLabels(refOf(c), Component.Restore),
            ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
            ownerReferences: [
              ownerReferenceFor({ ...c, apiVersion: "openbao.org/v1alpha1", kind: "OpenBaoCluster" }, false),
            ],
          },
          automountServiceAccountToken: false,
        },
        { fieldManager: RESTORE_FIELD_MANAGER, force: true, signal },
      );
    },
    async image(r, c, signal) {
      const image = executorImageOf(r, c, config);
      if (!image) return { ok: true, image: "" };
      return operatorImage(
        imageVerifier,
        { reader: liveReader(client), events, signal },
        c,
        image,
        OpenBaoRestoreReason.RestoreExecutorImageVerificationFailed,
        "restore executor image",
      );
    },
    build(r, c, name, verified) {
      const image = verified || executorImageOf(r, c, config);
      if (!image)
        throw new Error(
          "no executor image: set spec.image, the cluster's spec.backup.image, or the openbao target's executorImage",
        );
      return buildExecutorJob({
        cluster: c,
        name,
        component: Component.Restore,
        image,
        contract: restoreContract(r, c, config.openBaoAudience),
        serviceAccountName: restoreServiceAccount(c.metadata.name!),
        podLabels: workloadIdentityOf(r.spec.source.target).podLabels,
        owner: r,
        platform: platformOf(config),
      });
    },
    outcome: (job, pods) => {
      const o = jobOutcome(job, pods);
      if (o.state === "succeeded") return { state: "succeeded", size: o.size, durationMs: o.durationMs };
      // The executor's word, under the same name in the restore's reasons.
      return o.state === "failed" ? { ...o, reason: OpenBaoRestoreReason[o.reason] } : o;
    },
  };
}

export function defaultRestorePorts(
  client: KubeClient,
  config: OpenBaoTargetConfig,
  imageVerifier?: ImageVerifier,
  events?: Pick<EventRecorder, "record">,
): RestorePorts {
  return { probe: storeProbe, jobs: executorRestoreJobs(client, config, imageVerifier, events) };
}
