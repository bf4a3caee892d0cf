import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { buildExecutorJob } from "../../src/targets/openbao/adminops/jobs/build.js";
import { workloadIdentityOf } from "../../src/targets/openbao/adminops/jobs/workload-identity.js";
import {
  type ExecutorJob,
  executorFiles,
  fromEnv,
  withDefaults,
} from "../../src/targets/openbao/executor/contract.js";

// biome-ignore lint/suspicious/noExplicitAny: a built manifest is an arbitrary object
type Obj = Record<string, any>;

const cluster = {
  apiVersion: "openbao.org/v1alpha1",
  kind: "OpenBaoCluster",
  metadata: { name: "bao", namespace: "ns", uid: "u-1" },
  spec: { version: "2.4.1", storage: { size: "1Gi" }, tls: { enabled: true } },
} as unknown as OpenBaoCluster;

const contract: ExecutorJob = {
  operation: "backup",
  openbao: { address: "https://bao-active.ns.svc:8200", caSecretName: "bao-tls-server" },
  auth: { method: "jwt", role: "backup", audience: "openbao-internal" },
  store: {
    provider: "s3",
    bucket: "b",
    key: "p/ns/bao/x.snap",
    endpoint: "http://s3:9000",
    credentialsSecretName: "creds",
  },
};

describe("executor Job builder", () => {
  const job = buildExecutorJob({
    cluster,
    name: "bao-backup-20261201t030000z",
    component: "backup",
    image: "localhost/platform-operator:dev",
    contract,
    serviceAccountName: "bao-backup",
  }) as Obj;
  const pod = job["spec"].template.spec;
  const c = pod.containers[0];

  it("runs once, owned by the cluster, cleaned up after a while", () => {
    assert.equal(job["spec"].backoffLimit, 0);
    assert.equal(pod.restartPolicy, "Never");
    assert.ok(job["spec"].ttlSecondsAfterFinished > 0);
    assert.deepEqual(job["metadata"].ownerReferences, [
      {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        name: "bao",
        uid: "u-1",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(job["metadata"].labels["openbao.org/component"], "backup");
  });

  it("is non-root with a read-only root filesystem and no API token", () => {
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(pod.securityContext.seccompProfile.type, "RuntimeDefault");
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(pod.serviceAccountName, "bao-backup");
  });

  it("carries the contract: the executor parses back exactly what was built", () => {
    const env = Object.fromEntries(
      (c.env as { name: string; value: string }[]).map((e) => [e.name, e.value]),
    );
    assert.deepEqual(fromEnv(env), withDefaults(contract));
  });

  it("mounts the CA, the projected token and the credentials as files, never as env values", () => {
    const vols: Record<string, Obj> = Object.fromEntries((pod.volumes as Obj[]).map((v) => [v["name"], v]));
    const projected = Object.values(vols).find((v) => v["projected"]);
    assert.equal(projected?.["projected"].sources[0].serviceAccountToken.audience, "openbao-internal");
    assert.ok(Object.values(vols).some((v) => v["secret"]?.secretName === "creds"));
    assert.ok(Object.values(vols).some((v) => v["secret"]?.secretName === "bao-tls-server"));
    for (const e of c.env as Obj[])
      assert.equal(e["valueFrom"], undefined, `${e["name"]} must be a plain value`);
    for (const m of c.volumeMounts as Obj[]) if (m["name"] !== "tmp") assert.equal(m["readOnly"], true);
  });

  it("writes its result where the controller reads it", () => {
    assert.equal(c.terminationMessagePath, "/dev/termination-log");
    assert.deepEqual(c.args, ["executor"]);
  });
});

describe("executor Job builder: web and workload identity (target.roleArn, target.workloadIdentity)", () => {
  const target = {
    bucket: "b",
    roleArn: "arn:aws:iam::123456789012:role/backup",
    workloadIdentity: {
      serviceAccountAnnotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/backup" },
      podLabels: { "azure.workload.identity/use": "true", "openbao.org/component": "not-ours-to-set" },
    },
  };
  const withRole: ExecutorJob = {
    ...contract,
    store: { ...contract.store, credentialsSecretName: undefined, roleArn: target.roleArn },
  };
  const job = buildExecutorJob({
    cluster,
    name: "bao-backup-20261201t030000z",
    component: "backup",
    image: "localhost/platform-operator:dev",
    contract: withRole,
    serviceAccountName: "bao-backup",
    podLabels: workloadIdentityOf(target).podLabels,
  }) as Obj;
  const pod = job["spec"].template.spec;
  const c = pod.containers[0];

  it("mounts a token for STS's audience and names it and the role the way every AWS SDK reads them", () => {
    const volume = pod.volumes.find((v: Obj) => v.name === "executor-web-identity");
    assert.deepEqual(volume.projected.sources, [
      { serviceAccountToken: { audience: "sts.amazonaws.com", expirationSeconds: 3600, path: "token" } },
    ]);
    const mount = c.volumeMounts.find((m: Obj) => m.name === "executor-web-identity");
    assert.equal(mount.readOnly, true);
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value]));
    assert.equal(env["AWS_ROLE_ARN"], target.roleArn);
    assert.equal(env["AWS_WEB_IDENTITY_TOKEN_FILE"], `${mount.mountPath}/token`);
    const parsed = fromEnv(env);
    assert.equal(parsed.store.roleArn, target.roleArn);
    assert.equal(executorFiles(parsed).webIdentityTokenFile, env["AWS_WEB_IDENTITY_TOKEN_FILE"]);
  });

  it("puts the workload identity's labels on the pod only, never over the operator's own", () => {
    const labels = job["spec"].template.metadata.labels;
    assert.equal(labels["azure.workload.identity/use"], "true");
    assert.equal(labels["openbao.org/component"], "backup");
    assert.equal(job["metadata"].labels["azure.workload.identity/use"], undefined);
  });

  it("without a role, no web identity mount and no AWS variables", () => {
    const plain = buildExecutorJob({
      cluster,
      name: "n",
      component: "backup",
      image: "i",
      contract,
      serviceAccountName: "sa",
    }) as Obj;
    const pc = plain["spec"].template.spec.containers[0];
    assert.ok(!pc.volumeMounts.some((m: Obj) => m.name === "executor-web-identity"));
    assert.ok(!pc.env.some((e: Obj) => e.name.startsWith("AWS_")));
  });
});
