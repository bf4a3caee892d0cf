import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { after, before, describe, it } from "node:test";
import tls from "node:tls";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { applyAny } from "../../src/runtime/apply.js";
import { SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { createCertificateAuthority, issueServerCertificate } from "../../src/runtime/pki/x509.js";
import { type ClusterRef, clusterNames } from "../../src/targets/openbao/identity.js";
import {
  reloadPodPieces,
  reloadWrapperConfigMap,
  TLS_CERT_FILE,
  TLS_KEY_FILE,
} from "../../src/targets/openbao/reload/pod.js";
import { certificateHash } from "../../src/targets/openbao/workload/certs/plan.js";
import { reconcileCertificates } from "../../src/targets/openbao/workload/certs/reconcile.js";
import { secretText } from "../../src/targets/openbao/workload/certs/secrets.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { clientFor, eventually } from "../support/kube.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  createOpenBaoCluster,
  installOpenBaoClusterCrd,
  serviceContext,
} from "../support/openbao-cluster.js";

// The reload path end to end on the local node: a real OpenBao pod (upstream image name) runs under
// the PID-1 wrapper with the server Secret mounted; when the Secret's certificate changes (rotated
// by the certificate service, or replaced by the user in External mode), kubelet updates the volume
// and the certificate OpenBao serves changes while the pod is neither restarted nor replaced.
// Nothing execs into the pod.

const HOUR = 3_600_000;

/** The certificate a TLS server presents, as seen from the test process through the node's routes. */
function servedFingerprint(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host, port, rejectUnauthorized: false, servername: "localhost" }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error("TLS handshake timed out")));
    socket.on("error", reject);
  });
}

const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint256;

const CONFIG = [
  "ui = false",
  'storage "inmem" {}',
  'listener "tcp" {',
  '  address = "0.0.0.0:8200"',
  `  tls_cert_file = "${TLS_CERT_FILE}"`,
  `  tls_key_file = "${TLS_KEY_FILE}"`,
  "}",
  "",
].join("\n");

describe("openbao certificates: a changed certificate reaches a running OpenBao without a restart", () => {
  let ctx: NodeNamespace;
  let client: KubeClient;

  before(async () => {
    ctx = await nodeNamespace("ot-reload");
    client = clientFor(ctx.node.kubeconfigPath);
    await installOpenBaoClusterCrd(client);
  });
  after(async () => {
    client?.close();
    await deleteNamespace(ctx);
  });

  /** One OpenBao pod as the workload service would run it: wrapper command, TLS Secret volume. */
  async function startPod(ref: ClusterRef, tlsSecretName: string): Promise<{ ip: string; uid: string }> {
    const pieces = reloadPodPieces(ref, {
      serverArgs: ["server", "-config=/openbao/config/config.hcl"],
      tlsSecretName,
      intervalSeconds: 2,
    });
    const pod = `${ref.name}-0`;
    for (const obj of [
      reloadWrapperConfigMap(ref),
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `${ref.name}-test-config`, namespace: ref.namespace },
        data: { "config.hcl": CONFIG },
      },
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: pod, namespace: ref.namespace },
        spec: {
          securityContext: { runAsUser: 100, runAsGroup: 1000, fsGroup: 1000, runAsNonRoot: true },
          containers: [
            {
              name: "openbao",
              image: `quay.io/openbao/openbao:${BAO_DEFAULT_VERSION}`,
              imagePullPolicy: "IfNotPresent",
              command: pieces.command,
              args: pieces.args,
              env: pieces.env,
              ports: [{ containerPort: 8200 }],
              readinessProbe: { tcpSocket: { port: 8200 }, periodSeconds: 2 },
              volumeMounts: [
                ...pieces.volumeMounts,
                { name: "config", mountPath: "/openbao/config", readOnly: true },
              ],
            },
          ],
          volumes: [...pieces.volumes, { name: "config", configMap: { name: `${ref.name}-test-config` } }],
        },
      },
    ])
      await applyAny(client, obj, { fieldManager: "test-setup", force: true });
    await ctx.waitFor(`pod/${pod}`, "condition=Ready", 300);
    const json = await ctx.getJson(`pod/${pod}`);
    return { ip: json["status"].podIP, uid: json["metadata"].uid };
  }

  /** Waits for OpenBao to serve `certPem`, then checks the pod is the same one and never restarted. */
  async function expectServedWithoutRestart(
    pod: string,
    started: { ip: string; uid: string },
    certPem: string,
  ) {
    await eventually(
      async () => ((await servedFingerprint(started.ip, 8200)) === fingerprintOf(certPem) ? true : undefined),
      240_000,
      `${pod} serving the new certificate`,
    ).catch(async (e: unknown) => {
      // Say what the pod saw: its log and the certificate on its volume (public, no key).
      const logs = await ctx.kubectl(["logs", pod]).catch((x: Error) => x.message);
      const mounted = await ctx.exec(pod, ["cat", TLS_CERT_FILE]).catch((x: Error) => x.message);
      const onVolume = mounted.includes("BEGIN CERTIFICATE") ? fingerprintOf(mounted) : mounted;
      throw new Error(
        `${(e as Error).message}\nvolume holds ${onVolume === fingerprintOf(certPem) ? "the new" : "NOT the new"} certificate\npod log:\n${logs.slice(-3000)}`,
      );
    });
    const now = await ctx.getJson(`pod/${pod}`);
    assert.equal(now["metadata"].uid, started.uid, "the pod was replaced");
    assert.equal(now["status"].containerStatuses[0].restartCount, 0, "the container restarted");
    const logs = await ctx.kubectl(["logs", pod]);
    assert.match(logs, /tls-reload: certificate files changed, sending SIGHUP/);
    assert.match(logs, /OpenBao reload triggered/);
    return logs;
  }

  it("OperatorManaged: serves the rotated certificate from the same pod, restartCount 0", async () => {
    const ns = ctx.namespace;
    const cluster: OpenBaoCluster = await createOpenBaoCluster(client, ns, "bao", {
      replicas: 1,
      tls: { enabled: true, mode: "OperatorManaged", rotationPeriod: "24h" },
    });
    let clock = new Date();
    const svc = serviceContext(client, cluster, "openbao-certs", () => clock);
    const first = await reconcileCertificates(svc, cluster);
    assert.equal(first.ready, true, first.message);
    const names = clusterNames({ name: "bao", namespace: ns });
    const cert1 = secretText(await client.get(SECRET, names.serverSecret, ns), "tls.crt")!;
    const started = await startPod({ name: "bao", namespace: ns }, names.serverSecret);
    assert.equal(await servedFingerprint(started.ip, 8200), fingerprintOf(cert1));

    // Past the rotation period, the same service call issues a new leaf.
    clock = new Date(clock.getTime() + 25 * HOUR);
    const second = await reconcileCertificates(svc, cluster);
    assert.equal(second.ready, true, second.message);
    assert.notEqual(second.activeCertHash, first.activeCertHash);
    const rotated = await client.get(SECRET, names.serverSecret, ns);
    const cert2 = secretText(rotated, "tls.crt")!;
    assert.notEqual(fingerprintOf(cert2), fingerprintOf(cert1));

    const logs = await expectServedWithoutRestart("bao-0", started, cert2);
    // The key never reaches the pod's log.
    assert.ok(!logs.includes(secretText(rotated, "tls.key")!.split("\n")[1]!));
    // The wrapper passes SIGTERM on: the pod goes well within its grace period.
    await ctx.kubectl(["delete", "pod", "bao-0", "--wait=true", "--timeout=120s"]);
  });

  it("External: waits for the user's Secret, serves it, then serves its replacement without a restart", async () => {
    const ns = ctx.namespace;
    const cluster: OpenBaoCluster = await createOpenBaoCluster(client, ns, "ext", {
      replicas: 1,
      tls: { enabled: true, mode: "External", serverSecretName: "user-tls", caSecretName: "user-tls" },
    });
    const svc = serviceContext(client, cluster, "openbao-certs");
    const waiting = await reconcileCertificates(svc, cluster);
    assert.equal(waiting.reason, "TLSSecretMissing");

    const now = new Date();
    const ca = createCertificateAuthority("user CA", now, 1000 * HOUR);
    const names = [`*.ext.${ns}.svc`, `*.${ns}.svc`, "localhost"];
    const put = async (pair: { certPem: string; keyPem: string }) =>
      client.apply(
        SECRET,
        {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "user-tls", namespace: ns },
          type: "kubernetes.io/tls",
          stringData: { "tls.crt": pair.certPem, "tls.key": pair.keyPem, "ca.crt": ca.certPem },
        },
        { fieldManager: "user", force: true },
      );
    const a = issueServerCertificate(ca, { commonName: "ext", names, now, validityMs: 10 * HOUR });
    await put(a);
    const ready = await reconcileCertificates(svc, cluster);
    assert.equal(ready.ready, true, ready.message);
    assert.equal(ready.activeCertHash, certificateHash(a.certPem, a.keyPem));
    const started = await startPod({ name: "ext", namespace: ns }, "user-tls");
    assert.equal(await servedFingerprint(started.ip, 8200), fingerprintOf(a.certPem));

    const b = issueServerCertificate(ca, { commonName: "ext", names, now, validityMs: 20 * HOUR });
    await put(b);
    const replaced = await reconcileCertificates(svc, cluster);
    assert.equal(replaced.activeCertHash, certificateHash(b.certPem, b.keyPem));
    await expectServedWithoutRestart("ext-0", started, b.certPem);
    await ctx.kubectl(["delete", "pod", "ext-0", "--wait=true", "--timeout=120s"]);
  });
});
