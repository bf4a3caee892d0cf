import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { STATEFULSET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EVENTS_V1 } from "../../src/runtime/events.js";
import { ImageVerifier } from "../../src/targets/openbao/imageverify/verifier.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { type OciRegistry, startOciRegistry } from "../../src/testenv/oci-registry.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { metricSum, startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";
import { type CosignKey, cosignKey, cosignSign, pushTinyImage } from "../support/signed-images.js";

// Image verification against real cosign signatures in a real registry on loopback: images signed
// by cosign with a key it generated (offline, no transparency log), one unsigned, one signed with
// another key. First the verifier alone, then the operator process on the real API server: a signed
// image gets the voter StatefulSet pinned to its digest; an unsigned or wrongly signed one under
// Block gets no StatefulSet at all and Degraded with upstream's reason naming the image; under Warn
// the StatefulSet is written with the image as given, and a Warning event says why.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
const VERSION = "2.7.2";

describe("openbao image verification with cosign signatures (loopback registry, real API server)", () => {
  let registry: OciRegistry;
  let signer: CosignKey;
  let other: CosignKey;
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;
  const digests: Record<string, string> = {};
  const image = (repo: string) => `${registry.host}/${repo}:${VERSION}`;

  before(async () => {
    [registry, signer, other] = await Promise.all([
      startOciRegistry(makeTempDir("oci-registry")),
      cosignKey("signer"),
      cosignKey("other"),
    ]);
    for (const repo of ["openbao-signed", "openbao-unsigned", "openbao-otherkey"])
      digests[repo] = await pushTinyImage(registry, repo, VERSION);
    await cosignSign(signer, `${registry.host}/openbao-signed@${digests["openbao-signed"]}`);
    await cosignSign(other, `${registry.host}/openbao-otherkey@${digests["openbao-otherkey"]}`);
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "ob-imgverify");
    await installOpenBaoClusterCrd(client);
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
  });
  after(async () => {
    await op?.stop();
    client?.close();
    await registry?.stop();
  });

  const verification = (key: string, failurePolicy = "Block") => ({
    enabled: true,
    failurePolicy,
    publicKey: key,
    // Signed offline: there is no transparency-log entry to check.
    ignoreTlog: true,
  });
  const get = async (name: string): Promise<Json> => (await client.get(OPENBAOCLUSTER, name, ns)) as Json;
  const cond = (c: Json, type: string): Json | undefined =>
    (c["status"]?.conditions ?? []).find((x: Json) => x["type"] === type);
  const statefulSet = async (name: string): Promise<Json | undefined> =>
    (await client.getOrUndefined(STATEFULSET, name, ns)) as Json | undefined;
  const passes = async (name: string) =>
    metricSum(await op!.metrics(), "openbao_reconcile_duration_seconds_count", { namespace: ns, name });

  it("the verifier takes cosign's own signature, and refuses an unsigned image and another key's", async () => {
    const v = new ImageVerifier();
    const settings = { field: "spec.imageVerification", publicKey: signer.pub, ignoreTlog: true };
    const ok = await v.verify(image("openbao-signed"), settings);
    assert.equal(ok.digest, digests["openbao-signed"]);
    assert.equal(ok.pinned, `${registry.host}/openbao-signed@${digests["openbao-signed"]}`);
    assert.equal((await v.verify(image("openbao-signed"), settings)).cached, true);
    await assert.rejects(
      v.verify(image("openbao-unsigned"), settings),
      /is not signed: no sha256-[0-9a-f]{64}\.sig/,
    );
    await assert.rejects(
      v.verify(image("openbao-otherkey"), settings),
      /no signature verifies with spec\.imageVerification\.publicKey/,
    );
    // And the right key for that one.
    const byOther = await v.verify(image("openbao-otherkey"), { ...settings, publicKey: other.pub });
    assert.equal(byOther.digest, digests["openbao-otherkey"]);
  });

  it("a signed image: the voter StatefulSet runs it pinned to the verified digest", async () => {
    await createOpenBaoCluster(client, ns, "signed", {
      replicas: 1,
      image: image("openbao-signed"),
      imageVerification: verification(signer.pub),
    });
    const sts = await eventually(() => statefulSet("signed"), 60_000, "the signed cluster's StatefulSet");
    assert.equal(
      sts["spec"].template.spec.containers[0].image,
      `${registry.host}/openbao-signed@${digests["openbao-signed"]}`,
    );
    const c = await eventually(
      async () => {
        const x = await get("signed");
        return cond(x, "Degraded") ? x : undefined;
      },
      30_000,
      "the signed cluster's status",
    );
    assert.notEqual(cond(c, "Degraded")?.reason, "ImageVerificationFailed");
    assert.doesNotMatch(cond(c, "UnsupportedFields")?.message ?? "", /imageVerification/);
  });

  for (const [name, repo, why] of [
    ["unsigned", "openbao-unsigned", /is not signed/],
    ["otherkey", "openbao-otherkey", /no signature verifies with spec\.imageVerification\.publicKey/],
  ] as const) {
    it(`Block, ${name} image: Degraded with ImageVerificationFailed naming the image, and no StatefulSet`, async () => {
      await createOpenBaoCluster(client, ns, name, {
        replicas: 1,
        image: image(repo),
        imageVerification: verification(signer.pub),
      });
      const c = await eventually(
        async () => {
          const x = await get(name);
          return cond(x, "Degraded")?.reason === "ImageVerificationFailed" ? x : undefined;
        },
        60_000,
        `${name}: Degraded=ImageVerificationFailed`,
      );
      const degraded = cond(c, "Degraded")!;
      assert.equal(degraded.status, "True");
      assert.ok(degraded.message.includes(image(repo)), degraded.message);
      assert.match(degraded.message, why);
      // More passes, and still nothing that would run the image.
      const seen = await passes(name);
      await eventually(
        async () => ((await passes(name)) >= seen + 2 ? true : undefined),
        60_000,
        "two more passes",
      );
      assert.equal(await statefulSet(name), undefined, "no StatefulSet for a refused image");
    });
  }

  it("Warn, unsigned image: the StatefulSet runs the image as given, and a Warning event says why", async () => {
    await createOpenBaoCluster(client, ns, "warned", {
      replicas: 1,
      image: image("openbao-unsigned"),
      imageVerification: verification(signer.pub, "Warn"),
    });
    const sts = await eventually(() => statefulSet("warned"), 60_000, "the warned cluster's StatefulSet");
    assert.equal(sts["spec"].template.spec.containers[0].image, image("openbao-unsigned"));
    const event = await eventually(
      async () =>
        ((await client.list(EVENTS_V1, { namespace: ns })).items as Json[]).find(
          (e) => e["regarding"]?.name === "warned" && e["reason"] === "ImageVerificationFailed",
        ),
      30_000,
      "the Warning event",
    );
    assert.equal(event["type"], "Warning");
    assert.match(event["note"], /is not signed.*failurePolicy is Warn/);
    assert.notEqual(cond(await get("warned"), "Degraded")?.reason, "ImageVerificationFailed");
  });
});
