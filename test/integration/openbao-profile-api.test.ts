import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { KubeClient } from "../../src/runtime/client.js";
import { EVENTS_V1 } from "../../src/runtime/events.js";
import type { ResourceType } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/reconciler.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { metricSum, startOpenBaoOperatorOnApi } from "../support/openbao-operator.js";

// Security profiles with the real operator process on the real API server (no node: the clusters
// wait for their first pod, which is all the profile's status, events and refusals need): the
// conditions each profile leads to, upstream's hourly warnings said once and stamped in upstream's
// annotations, and the Hardened profile's refusal of Jobs that could not leave the namespace.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;
const RESTORE: ResourceType = {
  group: "openbao.org",
  version: "v1alpha1",
  kind: "OpenBaoRestore",
  plural: "openbaorestores",
  namespaced: true,
};

describe("openbao security profiles on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let op: Awaited<ReturnType<typeof startOpenBaoOperatorOnApi>> | undefined;

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(client, "ob-profile");
    await installOpenBaoClusterCrd(client);
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
  });
  after(async () => {
    await op?.stop();
    client.close();
  });

  const get = async (name: string): Promise<Json> => (await client.get(OPENBAOCLUSTER, name, ns)) as Json;
  const cond = (c: Json, type: string): Json | undefined =>
    (c["status"]?.conditions ?? []).find((x: Json) => x["type"] === type);
  const warnings = async (name: string): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    // The hourly warnings only, not a condition's transition (whose note starts with its type).
    for (const e of (await client.list(EVENTS_V1, { namespace: ns })).items as Json[])
      if (e["regarding"]?.name === name && e["type"] === "Warning" && !/^[A-Za-z]+: /.test(e["note"] ?? ""))
        out.set(e["reason"], (out.get(e["reason"]) ?? 0) + (e["series"]?.count ?? 1));
    return out;
  };
  /** Events are written in the background: wait until `reason` has been said `times`. */
  const said = (name: string, reason: string, times: number) =>
    eventually(
      async () => ((await warnings(name)).get(reason) === times ? true : undefined),
      30_000,
      `${reason} said ${times} time(s) about ${name}`,
    );
  const passes = async (name: string) =>
    metricSum(await op!.metrics(), "openbao_reconcile_duration_seconds_count", { namespace: ns, name });

  it("Development: SecurityRisk and ProductionReady say so, each hourly warning is said once and stamped", async () => {
    await createOpenBaoCluster(client, ns, "dev", { profile: "Development", replicas: 1 });
    const c = await eventually(
      async () => {
        const x = await get("dev");
        const a = x["metadata"].annotations ?? {};
        return cond(x, "ProductionReady") && a["openbao.org/last-root-token-warning"] ? x : undefined;
      },
      60_000,
      "ProductionReady and the warning stamps",
    );
    assert.equal(cond(c, "SecurityRisk")?.reason, "DevelopmentProfile");
    assert.equal(cond(c, "SecurityRisk")?.status, "True");
    assert.deepEqual(
      [cond(c, "ProductionReady")?.status, cond(c, "ProductionReady")?.reason],
      ["False", "DevelopmentProfile"],
    );
    assert.deepEqual(
      [cond(c, "EtcdEncryptionWarning")?.status, cond(c, "EtcdEncryptionWarning")?.reason],
      ["True", "EtcdEncryptionUnknown"],
    );
    const a = c["metadata"].annotations;
    for (const k of ["last-development-warning", "last-static-unseal-warning", "last-root-token-warning"])
      assert.ok(
        !Number.isNaN(Date.parse(a[`openbao.org/${k}`])),
        `openbao.org/${k} is a time: ${a[`openbao.org/${k}`]}`,
      );
    assert.equal(a["openbao.org/last-profile-not-set-warning"], undefined);

    for (const r of ["DevelopmentProfile", "StaticUnsealInUse", "RootTokenStored"]) await said("dev", r, 1);
    // More passes (the resync is 2 s): none says the warnings again within the hour.
    const seen = await passes("dev");
    await eventually(
      async () => ((await passes("dev")) >= seen + 3 ? true : undefined),
      60_000,
      "three more passes",
    );
    const once = await warnings("dev");
    for (const r of ["DevelopmentProfile", "StaticUnsealInUse", "RootTokenStored"])
      assert.equal(once.get(r), 1, `${r} said once: ${JSON.stringify([...once])}`);
    assert.equal(once.get("ProfileNotSet"), undefined);

    // A restarted operator reads the stamps: nothing is said again early, but a stamp older than
    // an hour (set here as if the last process had said it then) is said again, once.
    await op!.stop();
    const old = new Date(Date.now() - 61 * 60_000).toISOString();
    await client.mergePatch(OPENBAOCLUSTER, "dev", ns, {
      metadata: { annotations: { "openbao.org/last-development-warning": old } },
    });
    op = await startOpenBaoOperatorOnApi(sharedEnv().kubeconfigPath, ns);
    await eventually(
      async () =>
        (await get("dev"))["metadata"].annotations["openbao.org/last-development-warning"] !== old
          ? true
          : undefined,
      60_000,
      "the development warning stamped again",
    );
    await said("dev", "DevelopmentProfile", 2);
    const restarted = await passes("dev");
    await eventually(
      async () => ((await passes("dev")) >= restarted + 3 ? true : undefined),
      60_000,
      "three passes of the new process",
    );
    const after = await warnings("dev");
    assert.equal(after.get("DevelopmentProfile"), 2, JSON.stringify([...after]));
    assert.equal(after.get("RootTokenStored"), 1);
    assert.equal(after.get("StaticUnsealInUse"), 1);
  });

  it("unset: ProductionReady names ProfileNotSet and the ProfileNotSet warning is said", async () => {
    await createOpenBaoCluster(client, ns, "bare", { replicas: 1 });
    const c = await eventually(
      async () => {
        const x = await get("bare");
        return x["metadata"].annotations?.["openbao.org/last-profile-not-set-warning"] ? x : undefined;
      },
      60_000,
      "the profile-not-set stamp",
    );
    assert.equal(cond(c, "ProductionReady")?.reason, "ProfileNotSet");
    assert.equal(cond(c, "SecurityRisk"), undefined);
    await said("bare", "ProfileNotSet", 1);
  });

  it("Hardened without egress rules: backups and restores refuse with NetworkEgressRulesRequired", async () => {
    await createOpenBaoCluster(client, ns, "hard", {
      profile: "Hardened",
      replicas: 3,
      tls: { mode: "External" },
      backup: {
        schedule: "0 3 * * *",
        jwtAuthRole: "backup",
        target: { endpoint: "https://s3.example.org", bucket: "b", credentialsSecretRef: { name: "creds" } },
      },
    });
    const c = await eventually(
      async () => {
        const x = await get("hard");
        return cond(x, "BackingUp")?.reason === "NetworkEgressRulesRequired" && cond(x, "ProductionReady")
          ? x
          : undefined;
      },
      60_000,
      "BackingUp=False NetworkEgressRulesRequired",
    );
    assert.equal(cond(c, "BackingUp")?.status, "False");
    assert.match(cond(c, "BackingUp")?.message, /spec\.network\.egressRules/);
    // A Hardened cluster with External TLS still has no admission check to rely on (nor an
    // external seal, nor self-init).
    assert.equal(cond(c, "ProductionReady")?.status, "False");
    assert.equal(cond(c, "ProductionReady")?.reason, "AdmissionPoliciesNotReady");
    await client.create(RESTORE, {
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoRestore",
      metadata: { name: "back", namespace: ns },
      spec: {
        cluster: "hard",
        source: { key: "x.snap", target: { bucket: "b", credentialsSecretRef: { name: "creds" } } },
        jwtAuthRole: "restore",
      },
    });
    const r = await eventually(
      async () => {
        const x = (await client.get(RESTORE, "back", ns)) as Json;
        return x["status"]?.phase === "Failed" ? x : undefined;
      },
      60_000,
      "the restore to fail",
    );
    const failed = (r["status"].conditions ?? [])
      .map((x: Json) => `${x["reason"]}: ${x["message"]}`)
      .join(" | ");
    assert.match(failed, /NetworkEgressRulesRequired: .*spec\.network\.egressRules/);
  });
});
