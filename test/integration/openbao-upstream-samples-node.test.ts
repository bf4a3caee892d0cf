import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { createExternalTlsSecrets } from "../support/external-tls-node.js";
import { createKeylessCa, type KeylessCa } from "../support/keyless-ca.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { type NodeRegistry, pushNodeImage, startNodeRegistry } from "../support/node-registry.js";
import {
  installOpenBaoCrd,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";
import { bundleTlogEntry, createRekorLog, dsseBody, type RekorLog } from "../support/rekor-log.js";
import {
  type CosignKey,
  cosignKey,
  cosignSignBundle,
  cosignTrustedRootWithLog,
  rewriteBundle,
} from "../support/signed-images.js";
import { startTransitOpenBao, type TransitOpenBao } from "../support/transit-node.js";
import { type Json, upstreamCluster, upstreamSamplesMissing } from "../support/upstream-samples.js";

// Part (b) of the proof that upstream openbao-operator's manifests work here: on the local node, the
// samples the node can serve run through the real operator and form their clusters, every voter in
// OpenBao's own Raft peer list. Each sample is applied as upstream wrote it; the only changes are the
// ones listed with it (the image version the node holds, services the node lacks), so a new change
// shows up in review. OPENBAO_UPSTREAM_SAMPLE=<name> runs one sample (they are heavy: three voters each).
//
// Samples not run here, and why:
const NOT_RUN: Record<string, string> = {
  acme: "needs an ACME directory reachable from the pods and DNS for its domain",
  awskms: "needs AWS KMS",
  azure: "needs Azure Key Vault",
  gcp: "needs Google Cloud KMS",
  oci: "needs OCI KMS",
  kmip: "needs a KMIP server",
  pkcs11: "needs a PKCS#11 module (an HSM) inside the OpenBao image",
  gateway: "needs cert-manager (its Issuer and Certificate) and a Gateway API implementation",
  full: "needs cert-manager (its Certificate), S3 and a transit OpenBao",
  backup:
    "needs S3 and its JWT role's Kubernetes CA (<K8S_CA_PEM>); backup and restore are proven on the basic sample by part (c), openbao-upstream-restore-node.test.ts",
  ingress: "needs an Ingress controller to prove anything beyond the basic sample",
};

interface Run {
  /** What differs from upstream's file, one line each. */
  changes: string[];
  /** Set-up on the node before the sample is applied (a transit OpenBao, certificate Secrets). */
  prepare?(ctx: NodeNamespace, doc: Json): Promise<void>;
  change(o: Json): void;
  /** Whether the test can read the Raft peer list (it needs a token). */
  token: "root-token-secret" | "none";
  /** More of the operator's targets.openbao section, for this sample. */
  operator?(namespace: string): Record<string, string>;
  /** What is checked between the apply and the cluster being Available (which it then must reach). */
  afterApply?(ctx: NodeNamespace, name: string): Promise<void>;
  /** What is checked once it is Available, of its voters' pods. */
  afterAvailable?(ctx: NodeNamespace, pods: string[]): Promise<void>;
}

const version = (o: Json) => {
  (o["spec"] as Json)["version"] = BAO_DEFAULT_VERSION;
};
const spec = (o: Json): Json => o["spec"] as Json;
let transit: TransitOpenBao | undefined;
/** The namespace the running sample is applied in (a reference's `namespace` must name it). */
let currentNamespace = "";

/** The sample's transit seal pointed at a transit OpenBao on the node, its token from a Secret. */
const transitChanges = [
  "unseal.transit.address: the placeholder https://TRANSIT_BAO_ADDR → the transit OpenBao the test runs on the node",
  "unseal.credentialsSecretRef: {name: transit-credentials} (the sample's commented-out suggestion): the seal's token and CA",
  "unseal.transit.tlsCACert: /etc/bao/seal-creds/ca.crt, that Secret's CA as mounted (upstream passes it as VAULT_CACERT instead)",
];
async function prepareTransit(ctx: NodeNamespace, doc: Json): Promise<void> {
  const t = (spec(doc)["unseal"] as Json | undefined)?.["transit"] as Json | undefined;
  const ref = (spec(doc)["unseal"] as Json | undefined)?.["credentialsSecretRef"] as Json | undefined;
  transit = await startTransitOpenBao(ctx, {
    keyName: String(t?.["keyName"] ?? "openbao-unseal-key"),
    mountPath: String(t?.["mountPath"] ?? "transit/"),
    ...(typeof ref?.["name"] === "string" ? { credentialsSecret: ref["name"] } : {}),
  });
}
function useTransit(o: Json): void {
  const unseal = spec(o)["unseal"] as Json;
  unseal["type"] = "transit";
  unseal["transit"] = {
    ...((unseal["transit"] as Json | undefined) ?? {}),
    address: transit!.address,
    tlsCACert: "/etc/bao/seal-creds/ca.crt",
  };
  unseal["credentialsSecretRef"] = { name: transit!.credentialsSecret };
}

/** The External-mode Secrets upstream's sample expects, with the gateway hostname its comment asks for. */
async function prepareExternalTls(ctx: NodeNamespace, doc: Json): Promise<void> {
  const hostname = (spec(doc)["gateway"] as Json | undefined)?.["hostname"];
  await createExternalTlsSecrets(
    ctx,
    String((doc["metadata"] as Json)["name"]),
    typeof hostname === "string" ? [hostname] : [],
  );
}

/** The transit OpenBao and the External TLS Secrets, which every Hardened sample here needs. */
async function prepareTransitAndTls(ctx: NodeNamespace, doc: Json): Promise<void> {
  await prepareTransit(ctx, doc);
  await prepareExternalTls(ctx, doc);
}

/**
 * The hardened sample's keyless image verification, kept as upstream wrote it (ignoreTlog unset, so
 * the transparency log is checked): the node's OpenBao image in a registry on the node, signed the
 * cosign 3 way (a Sigstore bundle referrer) with a certificate for the sample's own issuer and
 * subject, issued by the test's CA in Fulcio's role, and logged by the test's Rekor stand-in (the
 * bundle's tlogEntries: inclusion promise and proof); the operator is given that CA and the log's
 * key as its trusted root. First only a signature by another subject exists (the cluster is
 * blocked); then the sample's signer signs, and the pods run the verified digest.
 */
interface SignedImage {
  registry: NodeRegistry;
  key: CosignKey;
  ca: KeylessCa;
  rekor: RekorLog;
  digest: string;
  /** 127.0.0.1:<port>/openbao/openbao, as the node names it. */
  repository: string;
  issuer: string;
  subject: string;
}
let signed: SignedImage | undefined;
const SIGSTORE_ROOT = "sigstore-root";
const WRONG_REF = "@refs/heads/main";

async function signAs(subject: string): Promise<void> {
  const s = signed!;
  const now = Date.now();
  const pem = s.ca.issue({
    publicKeyPem: s.key.pub,
    issuer: s.issuer,
    subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3 * 3600_000),
  });
  await cosignSignBundle(s.key, `${s.registry.registry.host}/openbao/openbao@${s.digest}`, {
    pem,
    chainPem: s.ca.chainPem,
  });
  // The log takes the new bundle, as a logging cosign's Rekor would.
  await rewriteBundle(s.registry.registry, "openbao/openbao", s.digest, (b) => {
    const body = dsseBody(
      JSON.stringify(b.bundle["dsseEnvelope"]),
      b.payload,
      b.signature,
      b.certificatePem!,
    );
    const entry = s.rekor.enter(body, Math.floor(Date.now() / 1000));
    b.bundle["verificationMaterial"]["tlogEntries"] = [bundleTlogEntry(entry, "dsse")];
  });
}

async function prepareSignedImage(ctx: NodeNamespace, doc: Json): Promise<void> {
  const iv = spec(doc)["imageVerification"] as Json;
  assert.notEqual(iv["ignoreTlog"], true, "upstream's hardened sample leaves the transparency-log check on");
  const started = Date.now();
  const registry = await startNodeRegistry(ctx.node);
  const digest = await pushNodeImage(
    ctx.node,
    registry,
    `docker.io/openbao/openbao:${BAO_DEFAULT_VERSION}`,
    "openbao/openbao",
    BAO_DEFAULT_VERSION,
  );
  const key = await cosignKey("hardened-signer");
  // cosign reaches the registry at the node's address: not through the dead proxy.
  const direct = `127.0.0.1,localhost,${ctx.node.addresses.nodeIp}`;
  key.env = { ...key.env, NO_PROXY: direct, no_proxy: direct };
  signed = {
    registry,
    key,
    ca: createKeylessCa("hardened-fulcio"),
    rekor: createRekorLog(),
    digest,
    repository: `${registry.inNode}/openbao/openbao`,
    issuer: String(iv["issuer"]),
    subject: String(iv["subject"]),
  };
  await signAs(signed.subject.replace(/@refs\/.*$/, WRONG_REF));
  await ctx.apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: SIGSTORE_ROOT, namespace: ctx.namespace },
    data: {
      "trusted_root.json": await cosignTrustedRootWithLog(
        key,
        signed.ca.chainPem,
        signed.rekor.publicKeyPem,
        new Date(Date.now() - 3600_000),
      ),
    },
  });
  console.log(`hardened: registry started, image pushed and signed in ${Date.now() - started} ms`);
}

/** Blocked while only another subject signed; then the sample's signer signs. */
async function blockedThenSigned(ctx: NodeNamespace, name: string): Promise<void> {
  const started = Date.now();
  const degraded = await poll(
    async () => {
      const c = await ctx.getJson(`openbaocluster/${name}`);
      const d = c.status?.conditions?.find((x: Json) => x.type === "Degraded");
      return d?.reason === "ImageVerificationFailed" ? d : undefined;
    },
    120_000,
    "hardened: Degraded=ImageVerificationFailed while only another subject signed",
    2000,
  );
  assert.equal(degraded.status, "True");
  assert.match(degraded.message, /is not spec\.imageVerification\.subject/);
  assert.ok(degraded.message.includes(WRONG_REF), degraded.message);
  const none = await ctx.kubectl(["get", "statefulset", name, "--ignore-not-found", "-o", "name"]);
  assert.equal(none.trim(), "", "no StatefulSet while the image is refused");
  const pods = await ctx.kubectl(["get", "pods", "-l", `openbao.org/cluster=${name}`, "-o", "name"]);
  assert.equal(pods.trim(), "", "no pod while the image is refused");
  console.log(`hardened: blocked after ${Date.now() - started} ms`);
  const signing = Date.now();
  await signAs(signed!.subject);
  // The next pass verifies the new signature and writes the StatefulSet, pinned to the digest.
  await poll(
    async () => {
      const out = await ctx.kubectl(["get", "statefulset", name, "--ignore-not-found", "-o", "name"]);
      return out.trim() ? true : undefined;
    },
    120_000,
    "hardened: the StatefulSet once the sample's signer signed",
    1000,
  );
  const sts = await ctx.getJson(`statefulset/${name}`);
  const images = sts.spec.template.spec.containers.map((c: Json) => c.image);
  assert.ok(images.includes(`${signed!.repository}@${signed!.digest}`), images.join(", "));
  console.log(
    `hardened: signed by the sample's signer, StatefulSet written ${Date.now() - signing} ms later`,
  );
}

/** Every voter runs the verified digest, pulled from the node's registry. */
async function runsVerifiedDigest(ctx: NodeNamespace, pods: string[]): Promise<void> {
  const s = signed!;
  for (const pod of pods) {
    const p = await ctx.getJson(`pod/${pod}`);
    const c = p.spec.containers.find((x: Json) => x.name === "openbao") ?? p.spec.containers[0];
    assert.equal(c.image, `${s.repository}@${s.digest}`, `${pod}'s image`);
    const status = p.status.containerStatuses.find((x: Json) => x.name === c.name);
    // The runtime reports an image by the first name it stored the content under: when another
    // test of the shared node pushed the same OpenBao to its own registry first, that registry's
    // name shows here. What was verified is the content, so the digest is what must match.
    const running = String(status.imageID);
    assert.equal(running.slice(running.lastIndexOf("@") + 1), s.digest, `${pod}'s running image`);
  }
  const events = ["get", "events", "--field-selector", "reason=Pulled", "-o", "json"];
  const pulled = JSON.parse(await ctx.kubectl(events)) as { items: Json[] };
  for (const e of pulled.items)
    if (String(e["message"]).includes(s.repository)) console.log(`hardened: ${String(e["message"])}`);
  await preloadedTagStillRuns(ctx);
}

/**
 * The registry pull above must not cost other tests the node's preloaded tag of the same image:
 * with the kubelet's default credential check, that pull recorded the image as pulled from this
 * registry only, and a pod naming `openbao/openbao:<version>` then had to pull from docker.io
 * (unreachable: ImagePullBackOff in whatever test shared the node next).
 */
async function preloadedTagStillRuns(ctx: NodeNamespace): Promise<void> {
  const name = "preloaded-tag";
  await ctx.apply({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      restartPolicy: "Never",
      securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name: "bao",
          image: `openbao/openbao:${BAO_DEFAULT_VERSION}`,
          imagePullPolicy: "IfNotPresent",
          command: ["bao", "version"],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
        },
      ],
    },
  });
  const phase = await poll(
    async () => {
      const p = await ctx.getJson(`pod/${name}`);
      const waiting = p.status?.containerStatuses?.[0]?.state?.waiting?.reason as string | undefined;
      if (waiting === "ErrImagePull" || waiting === "ImagePullBackOff") return waiting;
      return p.status?.phase === "Succeeded" || p.status?.phase === "Failed" ? p.status.phase : undefined;
    },
    180_000,
    `pod ${name} to finish`,
    1000,
  );
  assert.equal(
    phase,
    "Succeeded",
    `a pod naming openbao/openbao:${BAO_DEFAULT_VERSION} after the registry pull`,
  );
  await ctx.kubectl(["delete", "pod", name, "--wait=false"]);
}

const RUNS: Record<string, Run> = {
  basic: {
    changes: [`spec.version: 2.4.4 → ${BAO_DEFAULT_VERSION}, the image the node holds`],
    change: version,
    token: "root-token-secret",
  },
  structured_config: {
    changes: [`spec.version: 2.4.4 → ${BAO_DEFAULT_VERSION}, the image the node holds`],
    change: version,
    token: "root-token-secret",
  },
  // Self-init keeps no root token and the sample makes no login the test could use, so the peer
  // list cannot be read: every pod must instead be unsealed and follow the one same leader.
  selfinit: {
    changes: [`spec.version: 2.4.4 → ${BAO_DEFAULT_VERSION}, the image the node holds`],
    change: version,
    token: "none",
  },
  // Hardened, transit seal, External TLS with a certificate carrying upstream's documented names,
  // and a gateway block on a server without the Gateway API (the cluster runs, GatewayReady=False).
  external_tls: {
    changes: [
      `spec.version: 2.4.4 → ${BAO_DEFAULT_VERSION}, the image the node holds`,
      ...transitChanges,
      "Secrets <name>-tls-ca and <name>-tls-server made by the test (*.<name>.<ns>.svc, *.<ns>.svc, the gateway hostname)",
    ],
    prepare: prepareTransitAndTls,
    change(o) {
      version(o);
      useTransit(o);
    },
    token: "none",
  },
  // Upstream's own transit sample names its token Secret and the CA file in it as the others do here.
  transit: {
    changes: [
      `spec.version: 2.4.4 → ${BAO_DEFAULT_VERSION}, the image the node holds`,
      "unseal.transit.address: https://infra-bao.infra-bao.svc:8200 → the transit OpenBao the test runs on the node",
      "unseal.credentialsSecretRef.namespace: openbaocluster-transit → the test's namespace, where the cluster is",
      "Secret transit-seal-token (token, ca.crt) and Secrets <name>-tls-ca, <name>-tls-server made by the test (*.<name>.<ns>.svc, *.<ns>.svc)",
    ],
    prepare: prepareTransitAndTls,
    change(o) {
      version(o);
      const unseal = spec(o)["unseal"] as Json;
      (unseal["transit"] as Json)["address"] = transit!.address;
      (unseal["credentialsSecretRef"] as Json)["namespace"] = currentNamespace;
    },
    token: "none",
  },
  hardened: {
    changes: [
      `spec.version: 2.4.4 → ${BAO_DEFAULT_VERSION}, the image the node holds`,
      `spec.image: openbao/openbao:2.4.4 → 127.0.0.1:<port>/openbao/openbao:${BAO_DEFAULT_VERSION}, the node's OpenBao in a registry on the node, signed the cosign 3 way (a Sigstore bundle referrer) with a certificate for the sample's own issuer and subject from the test's private CA in Fulcio's role, logged by the test's Rekor stand-in (spec.imageVerification unchanged: ignoreTlog unset, the log entry is checked)`,
      "the operator's targets.openbao.imageVerification.trustedRootConfigMap names a trusted_root.json with that CA and that log's key",
      "unseal: awskms (needs AWS KMS) → transit, on a transit OpenBao the test runs on the node",
      ...transitChanges.slice(1),
      "spec.backup removed: its target is s3.amazonaws.com, which the node must not reach",
      "Secrets <name>-tls-ca and <name>-tls-server made by the test (*.<name>.<ns>.svc, *.<ns>.svc)",
    ],
    async prepare(ctx, doc) {
      await prepareTransitAndTls(ctx, doc);
      await prepareSignedImage(ctx, doc);
    },
    change(o) {
      version(o);
      spec(o)["image"] = `${signed!.repository}:${BAO_DEFAULT_VERSION}`;
      spec(o)["unseal"] = {
        type: "transit",
        transit: { keyName: "openbao-unseal-key", mountPath: "transit/" },
      };
      useTransit(o);
      delete spec(o)["backup"];
    },
    operator: (ns) => ({
      imageVerification: `{ trustedRootConfigMap: { namespace: ${ns}, name: ${SIGSTORE_ROOT} } }`,
    }),
    afterApply: blockedThenSigned,
    afterAvailable: runsVerifiedDigest,
    token: "none",
  },
};

const skip = upstreamSamplesMissing();
const only = process.env["OPENBAO_UPSTREAM_SAMPLE"];

describe("upstream openbao-operator samples on the local node", { skip, timeout: 90 * 60_000 }, () => {
  for (const [sample, why] of Object.entries(NOT_RUN)) it(`${sample}: not run`, { skip: why }, () => {});

  for (const [sample, run] of Object.entries(RUNS)) {
    const skipThis = only !== undefined && only !== sample ? `OPENBAO_UPSTREAM_SAMPLE=${only}` : undefined;
    describe(`${sample} (changes: ${run.changes.join("; ")})`, { skip: skipThis }, () => {
      let ctx: NodeNamespace;
      let op: OperatorProcess | undefined;
      const doc = skip ? {} : upstreamCluster(sample);
      const name = String((doc["metadata"] as Json | undefined)?.["name"] ?? "");
      const replicas = Number((doc["spec"] as Json | undefined)?.["replicas"] ?? 3);
      const exec = (pod: string, command: string) => ctx.kubectl(["exec", pod, "--", "sh", "-c", command]);

      before(
        async () => {
          ctx = await nodeNamespace("upstream");
          await installOpenBaoCrd(ctx);
          op = await startOpenBaoOperator(ctx, {
            pollInterval: "2s",
            resyncInterval: "5s",
            ...run.operator?.(ctx.namespace),
          });
        },
        { timeout: 45 * 60_000 },
      );
      after(async () => {
        if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
        await op?.stop();
        await deleteNamespace(ctx);
        await signed?.registry.registry.stop();
        signed = undefined;
      });

      const proof =
        run.token === "none"
          ? "every voter unsealed and following the one same leader"
          : "every voter in OpenBao's peer list";
      it(`forms its ${replicas}-voter cluster, ${proof}`, async () => {
        currentNamespace = ctx.namespace;
        await run.prepare?.(ctx, doc);
        const applied = structuredClone(doc);
        run.change(applied);
        await ctx.apply(applied);
        await run.afterApply?.(ctx, name);
        await poll(
          async () => {
            const c = await ctx.getJson(`openbaocluster/${name}`);
            const available = c.status?.conditions?.find((x: Json) => x.type === "Available");
            return available?.status === "True" && c.status?.readyReplicas === replicas ? c : undefined;
          },
          20 * 60_000,
          `${sample}: Available with ${replicas} ready voters`,
          3000,
        ).catch(async (e: unknown) => {
          const c: Json = await ctx.getJson(`openbaocluster/${name}`).catch(() => ({}));
          const pods = await ctx.kubectl(["get", "pods", "-o", "wide"]).catch(() => "");
          throw new Error(`${String(e)}\nstatus: ${JSON.stringify(c.status)}\n${pods}`);
        });
        const pods = Array.from({ length: replicas }, (_, i) => `${name}-${i}`);
        if (run.token === "root-token-secret") {
          const secret = await ctx.getJson(`secret/${name}-root-token`);
          const token = Buffer.from(secret["data"].token, "base64").toString("utf8");
          const servers = await poll(
            async () => {
              const out = await exec(
                pods[0]!,
                `BAO_TOKEN=${token} bao operator raft list-peers -format=json`,
              ).catch(() => "");
              if (!out) return undefined;
              const list = JSON.parse(out).data.config.servers as { node_id: string; voter: boolean }[];
              return list.filter((s) => s.voter).length === replicas ? list : undefined;
            },
            300_000,
            `${sample}: ${replicas} voters in the Raft peer list`,
            2000,
          );
          assert.deepEqual(servers.map((s) => s.node_id).sort(), pods);
          assert.ok(
            servers.every((s) => s.voter),
            JSON.stringify(servers),
          );
        } else {
          const leaders = await Promise.all(
            pods.map(async (pod) => {
              const health = JSON.parse(await exec(pod, "bao status -format=json || true"));
              assert.equal(health.initialized, true, `${pod} initialized`);
              assert.equal(health.sealed, false, `${pod} unsealed`);
              return String(health.leader_cluster_address ?? health.leader_address ?? "");
            }),
          );
          assert.equal(new Set(leaders).size, 1, `one leader for all: ${leaders.join(", ")}`);
          assert.notEqual(leaders[0], "");
        }
        await run.afterAvailable?.(ctx, pods);
      });
    });
  }
});
