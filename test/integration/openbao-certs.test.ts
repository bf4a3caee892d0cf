import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EVENTS_V1 } from "../../src/runtime/events.js";
import { createCertificateAuthority, issueServerCertificate } from "../../src/runtime/pki/x509.js";
import { tlsCertExpiry, tlsRotations } from "../../src/targets/openbao/workload/certs/metrics.js";
import { certificateHash } from "../../src/targets/openbao/workload/certs/plan.js";
import { reconcileCertificates } from "../../src/targets/openbao/workload/certs/reconcile.js";
import { secretText } from "../../src/targets/openbao/workload/certs/secrets.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, freshNamespace, NAMESPACE } from "../support/kube.js";
import {
  createOpenBaoCluster,
  installOpenBaoClusterCrd,
  serviceContext,
} from "../support/openbao-cluster.js";

// The certificate service on the real API server. OperatorManaged: Secrets created under the
// cluster, a quiet pass writes nothing, the leaf (not the CA) is replaced once the rotation period
// has passed and when the names change. External: missing, then invalid, then valid Secrets, with
// the TLSReady condition and events saying which; the operator writes nothing in that mode.

const HOUR = 3_600_000;
// biome-ignore lint/suspicious/noExplicitAny: tests read API objects by path
type Any = any;

describe("openbao certificate service on the real API server", () => {
  let client: KubeClient;
  let ns: string;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    ns = await freshNamespace(client, "ot-certs");
  });
  after(async () => {
    await client.delete(NAMESPACE, ns).catch(() => {});
    client.close();
  });

  /** Upstream's TLS metrics for one cluster: expiry by type, and certificates issued. */
  const tlsMetrics = async (name: string) => {
    const expiry = (await tlsCertExpiry.get()).values.filter(
      (v) => v.labels.namespace === ns && v.labels.name === name,
    );
    const issued = (await tlsRotations.get()).values.find(
      (v) => v.labels.namespace === ns && v.labels.name === name,
    );
    return {
      expiry: Object.fromEntries(expiry.map((v) => [String(v.labels.type), v.value])),
      issued: issued?.value ?? 0,
    };
  };
  const notAfter = (pem: string) => Math.floor(Date.parse(new X509Certificate(pem).validTo) / 1000);

  const versions = async (...names: string[]) =>
    Promise.all(names.map((n) => client.get(SECRET, n, ns).then((s) => s.metadata.resourceVersion)));

  it("OperatorManaged: creates, keeps, then rotates the server certificate under the same CA", async () => {
    const cluster = await createOpenBaoCluster(client, ns, "managed", {
      replicas: 3,
      tls: { enabled: true, mode: "OperatorManaged", rotationPeriod: "48h", extraSANs: ["bao.example.org"] },
    });
    let clock = new Date();
    const ctx = serviceContext(client, cluster, "openbao-certs", () => clock);
    const first = await reconcileCertificates(ctx, cluster);
    assert.equal(first.ready, true, first.message);
    assert.deepEqual(first.condition && { ...first.condition, message: undefined }, {
      type: "TLSReady",
      status: "True",
      reason: "OperatorManagedTLS",
      message: undefined,
    });
    const server: Any = await client.get(SECRET, "managed-tls-server", ns);
    const ca: Any = await client.get(SECRET, "managed-tls-ca", ns);
    for (const s of [server, ca]) {
      assert.equal(s.type, "kubernetes.io/tls");
      assert.equal(s.metadata.ownerReferences[0].uid, cluster.metadata.uid);
    }
    const leaf = new X509Certificate(secretText(server, "tls.crt")!);
    const caCert = new X509Certificate(secretText(server, "ca.crt")!);
    assert.ok(leaf.verify(caCert.publicKey) && leaf.checkIssued(caCert));
    assert.equal(
      first.activeCertHash,
      certificateHash(secretText(server, "tls.crt")!, secretText(server, "tls.key")!),
    );
    for (const host of [
      `managed.${ns}.svc`,
      `managed-public.${ns}.svc`,
      `managed-2.managed.${ns}.svc`,
      `managed-2.managed.${ns}.svc.cluster.local`,
      "bao.example.org",
    ])
      assert.notEqual(leaf.checkHost(host), undefined, host);

    assert.deepEqual(await tlsMetrics("managed"), {
      expiry: { OperatorManaged: notAfter(secretText(server, "tls.crt")!) },
      issued: 1,
    });

    const quiet = await versions("managed-tls-ca", "managed-tls-server");
    clock = new Date(clock.getTime() + 47 * HOUR);
    const second = await reconcileCertificates(ctx, cluster);
    assert.equal(second.activeCertHash, first.activeCertHash);
    assert.deepEqual(second.changes, []);
    assert.deepEqual(
      await versions("managed-tls-ca", "managed-tls-server"),
      quiet,
      "a quiet pass writes nothing",
    );

    clock = new Date(clock.getTime() + 2 * HOUR);
    const rotated = await reconcileCertificates(ctx, cluster);
    assert.notEqual(rotated.activeCertHash, first.activeCertHash);
    const server2: Any = await client.get(SECRET, "managed-tls-server", ns);
    const ca2: Any = await client.get(SECRET, "managed-tls-ca", ns);
    assert.equal(secretText(ca2, "tls.crt"), secretText(ca, "tls.crt"), "the CA stays");
    assert.notEqual(secretText(server2, "tls.crt"), secretText(server, "tls.crt"));
    assert.ok(new X509Certificate(secretText(server2, "tls.crt")!).verify(caCert.publicKey));
    // The quiet pass issued nothing; the rotation is counted and the expiry follows the new leaf.
    assert.deepEqual(await tlsMetrics("managed"), {
      expiry: { OperatorManaged: notAfter(secretText(server2, "tls.crt")!) },
      issued: 2,
    });

    // A new extra SAN is a new certificate at once.
    const wider = {
      ...cluster,
      spec: { ...cluster.spec, tls: { ...cluster.spec.tls, extraSANs: ["other.example.org"] } },
    };
    const third = await reconcileCertificates(ctx, wider as OpenBaoCluster);
    assert.notEqual(third.activeCertHash, rotated.activeCertHash);
    const leaf3 = new X509Certificate(
      secretText(await client.get(SECRET, "managed-tls-server", ns), "tls.crt")!,
    );
    assert.notEqual(leaf3.checkHost("other.example.org"), undefined);
    assert.equal(leaf3.checkHost("bao.example.org"), undefined);

    // Events tell what happened and carry no key material.
    await ctx.recorder.flush();
    const events = (await client.list(EVENTS_V1, { namespace: ns })).items as Any[];
    const notes = events
      .filter((e) => e.regarding.uid === cluster.metadata.uid)
      .map((e) => `${e.reason}: ${e.note}`);
    assert.ok(notes.some((n) => n.startsWith("CAIssued")));
    assert.ok(notes.some((n) => n.includes("the rotation period has passed")));
    const keyLine = secretText(server2, "tls.key")!.split("\n")[1]!;
    for (const n of notes) assert.ok(!n.includes("PRIVATE KEY") && !n.includes(keyLine));
  });

  it("External: waits for the Secrets, refuses an unfit one, accepts a valid one; writes nothing", async () => {
    const cluster = await createOpenBaoCluster(client, ns, "ext", {
      replicas: 1,
      tls: { enabled: true, mode: "External", serverSecretName: "ext-server", caSecretName: "ext-ca" },
    });
    const ctx = serviceContext(client, cluster, "openbao-certs");
    const missing = await reconcileCertificates(ctx, cluster);
    assert.equal(missing.ready, false);
    assert.equal(missing.reason, "TLSSecretMissing");
    assert.equal(missing.condition?.status, "False");
    assert.match(missing.message, /waiting for Secret ext-server/);

    const now = new Date();
    const ca = createCertificateAuthority("user CA", now, 1000 * HOUR);
    const wrongNames = issueServerCertificate(ca, {
      commonName: "x",
      names: ["x.example.org"],
      now,
      validityMs: 10 * HOUR,
    });
    const secret = (name: string, data: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: ns },
      type: "Opaque",
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
    });
    await client.apply(SECRET, secret("ext-ca", { "ca.crt": ca.certPem }), {
      fieldManager: "user",
      force: true,
    });
    await client.apply(
      SECRET,
      secret("ext-server", { "tls.crt": wrongNames.certPem, "tls.key": wrongNames.keyPem }),
      {
        fieldManager: "user",
        force: true,
      },
    );
    const invalid = await reconcileCertificates(ctx, cluster);
    assert.equal(invalid.reason, "TLSSecretInvalid");
    assert.match(
      invalid.message,
      new RegExp(`do not cover ext-public\\.${ns}\\.svc, ext-0\\.ext\\.${ns}\\.svc`),
    );
    assert.ok(!invalid.message.includes(wrongNames.keyPem.split("\n")[1]!));

    const good = issueServerCertificate(ca, {
      commonName: `ext.${ns}.svc`,
      // Upstream's documented names.
      names: [`*.ext.${ns}.svc`, `*.${ns}.svc`],
      now,
      validityMs: 10 * HOUR,
    });
    await client.apply(SECRET, secret("ext-server", { "tls.crt": good.certPem, "tls.key": good.keyPem }), {
      fieldManager: "user",
      force: true,
    });
    const ready = await reconcileCertificates(ctx, cluster);
    assert.equal(ready.ready, true, ready.message);
    assert.equal(ready.activeCertHash, certificateHash(good.certPem, good.keyPem));
    // The user's certificate: its expiry under type External, nothing counted as issued by us.
    assert.deepEqual(await tlsMetrics("ext"), { expiry: { External: notAfter(good.certPem) }, issued: 0 });

    await ctx.recorder.flush();
    const reasons = ((await client.list(EVENTS_V1, { namespace: ns })).items as Any[])
      .filter((e) => e.regarding.uid === cluster.metadata.uid)
      .map((e) => e.reason);
    assert.ok(reasons.includes("TLSSecretMissing") && reasons.includes("TLSSecretInvalid"), reasons.join());
    // The operator created nothing: its own Secret names for this cluster do not exist.
    assert.equal(await client.getOrUndefined(SECRET, "ext-tls-server", ns), undefined);
    assert.equal((await client.get(SECRET, "ext-server", ns)).metadata.ownerReferences, undefined);
  });

  it("observe-only: reports the Secrets it would write, writes none", async () => {
    const cluster = await createOpenBaoCluster(client, ns, "watched", { replicas: 1 });
    const ctx = { ...serviceContext(client, cluster, "openbao-certs"), observeOnly: true };
    const out = await reconcileCertificates(ctx, cluster);
    assert.equal(out.ready, true, out.message);
    assert.deepEqual(out.changes, [
      "Secret/watched-tls-ca would be created",
      "Secret/watched-tls-server would be created",
    ]);
    assert.equal(out.activeCertHash, undefined, "no certificate is active yet");
    assert.equal(await client.getOrUndefined(SECRET, "watched-tls-ca", ns), undefined);
    assert.equal(await client.getOrUndefined(SECRET, "watched-tls-server", ns), undefined);
  });

  it("ACME and disabled TLS need no Secrets", async () => {
    const acme = await createOpenBaoCluster(client, ns, "acme", {
      tls: { enabled: true, mode: "ACME", acme: { directoryURL: "https://acme.example.org/dir" } },
    });
    const out = await reconcileCertificates(serviceContext(client, acme, "openbao-certs"), acme);
    assert.equal(out.ready, true, out.message);
    assert.equal(out.activeCertHash, undefined);
    assert.equal(await client.getOrUndefined(SECRET, "acme-tls-server", ns), undefined);
  });
});
