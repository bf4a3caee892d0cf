import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { after, before, describe, it } from "node:test";
import tls from "node:tls";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { applyAny } from "../../src/runtime/apply.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { clusterNames } from "../../src/targets/openbao/identity.js";
import {
  reloadPodPieces,
  reloadWrapperConfigMap,
  TLS_CERT_FILE,
  TLS_KEY_FILE,
} from "../../src/targets/openbao/reload/pod.js";
import { reconcileCertificates } from "../../src/targets/openbao/workload/certs/reconcile.js";
import { SECRET, secretText } from "../../src/targets/openbao/workload/certs/secrets.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { clientFor, eventually } from "../support/kube.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import {
  createOpenBaoCluster,
  installOpenBaoClusterCrd,
  serviceContext,
} from "../support/openbao-cluster.js";

// The reload path end to end on the local node: the certificate service issues the server Secret,
// a real OpenBao pod (upstream image name) runs under the PID-1 wrapper with that Secret mounted,
// the service rotates the certificate (its clock moved past the rotation period), kubelet updates
// the volume, and the certificate OpenBao serves changes while the pod is neither restarted nor
// replaced. Nothing execs into the pod.

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

describe("openbao certificates: rotation reaches a running OpenBao without a restart", () => {
  let ctx: NodeNamespace;
  let client: KubeClient;
  let cluster: OpenBaoCluster;

  before(async () => {
    ctx = await nodeNamespace("ot-reload");
    client = clientFor(ctx.node.kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    cluster = await createOpenBaoCluster(client, ctx.namespace, "bao", {
      replicas: 1,
      tls: { enabled: true, mode: "OperatorManaged", rotationPeriod: "24h" },
    });
  });
  after(async () => {
    client?.close();
    await deleteNamespace(ctx);
  });

  it("serves the rotated certificate from the same pod, restartCount 0", async () => {
    const ns = ctx.namespace;
    let clock = new Date();
    const svc = serviceContext(client, cluster, "openbao-certs", () => clock);
    const first = await reconcileCertificates(svc, cluster);
    assert.equal(first.ready, true, first.message);
    const names = clusterNames({ name: "bao", namespace: ns });
    const secret1 = await client.get(SECRET, names.serverSecret, ns);
    const cert1 = secretText(secret1, "tls.crt")!;

    const config = [
      "ui = false",
      'storage "inmem" {}',
      'listener "tcp" {',
      '  address = "0.0.0.0:8200"',
      `  tls_cert_file = "${TLS_CERT_FILE}"`,
      `  tls_key_file = "${TLS_KEY_FILE}"`,
      "}",
      "",
    ].join("\n");
    const pieces = reloadPodPieces(
      { name: "bao", namespace: ns },
      {
        serverArgs: ["server", "-config=/openbao/config/config.hcl"],
        tlsSecretName: names.serverSecret,
        intervalSeconds: 2,
      },
    );
    for (const obj of [
      reloadWrapperConfigMap({ name: "bao", namespace: ns }),
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "bao-test-config", namespace: ns },
        data: { "config.hcl": config },
      },
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "bao-0", namespace: ns, labels: { app: "bao-reload" } },
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
          volumes: [...pieces.volumes, { name: "config", configMap: { name: "bao-test-config" } }],
        },
      },
    ])
      await applyAny(client, obj, { fieldManager: "test-setup", force: true });
    await ctx.waitFor("pod/bao-0", "condition=Ready", 300);
    const pod1 = await ctx.getJson("pod/bao-0");
    const ip: string = pod1["status"].podIP;
    assert.equal(await servedFingerprint(ip, 8200), fingerprintOf(cert1));

    // Past the rotation period, the same service call issues a new leaf.
    clock = new Date(clock.getTime() + 25 * HOUR);
    const second = await reconcileCertificates(svc, cluster);
    assert.equal(second.ready, true, second.message);
    assert.notEqual(second.activeCertHash, first.activeCertHash);
    const cert2 = secretText(await client.get(SECRET, names.serverSecret, ns), "tls.crt")!;
    assert.notEqual(fingerprintOf(cert2), fingerprintOf(cert1));

    // Kubelet refreshes the volume on its own schedule (about a minute); the wrapper then signals.
    await eventually(
      async () => ((await servedFingerprint(ip, 8200)) === fingerprintOf(cert2) ? true : undefined),
      240_000,
      "OpenBao serving the rotated certificate",
    ).catch(async (e: unknown) => {
      // Say what the pod saw: its log and the certificate on its volume (public, no key).
      const logs = await ctx.kubectl(["logs", "bao-0"]).catch((x: Error) => x.message);
      const mounted = await ctx.exec("bao-0", ["cat", TLS_CERT_FILE]).catch((x: Error) => x.message);
      const onVolume = mounted.includes("BEGIN CERTIFICATE") ? fingerprintOf(mounted) : mounted;
      throw new Error(
        `${(e as Error).message}\nvolume holds ${onVolume === fingerprintOf(cert2) ? "the new" : "NOT the new"} certificate\npod log:\n${logs.slice(-3000)}`,
      );
    });
    const pod2 = await ctx.getJson("pod/bao-0");
    assert.equal(pod2["metadata"].uid, pod1["metadata"].uid, "the pod was replaced");
    assert.equal(pod2["status"].containerStatuses[0].restartCount, 0, "the container restarted");
    const logs = await ctx.kubectl(["logs", "bao-0"]);
    assert.match(logs, /tls-reload: certificate files changed, sending SIGHUP/);
    assert.match(logs, /OpenBao reload triggered/);
    // The key never reaches the pod's log.
    const key2 = secretText(await client.get(SECRET, names.serverSecret, ns), "tls.key")!;
    assert.ok(!logs.includes(key2.split("\n")[1]!));

    // The wrapper passes SIGTERM on: the pod ends promptly and OpenBao says it shut down.
    await ctx.kubectl(["delete", "pod", "bao-0", "--wait=true", "--timeout=120s"]);
  });
});
