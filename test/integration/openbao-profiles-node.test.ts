import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { createExternalTlsSecrets } from "../support/external-tls-node.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { type ChartAccess, installChartAccess } from "../support/openbao-chart.js";
import {
  installOpenBaoCrd,
  metricSum,
  type OperatorProcess,
  poll,
  startOpenBaoOperator,
} from "../support/openbao-operator.js";
import { startTransitOpenBao, type TransitOpenBao } from "../support/transit-node.js";

// Security profiles on the local node with real OpenBao pods, under the chart's own admission
// policies (rendered by helm, bound to this file's namespace only) and with the operator running as
// the chart's ServiceAccount with the chart's RBAC, so the locks judge its every write as they would
// in a cluster. Three clusters side by side (six pods with the transit OpenBao):
// - Hardened: External TLS from certificates with upstream's documented names, a transit seal on a
//   second OpenBao the test runs, self-init with requests, egress rules, three voters. It forms
//   (every voter in OpenBao's own Raft peer list, read with a login self-init configured) and is
//   ProductionReady=True; no root token is stored and no hourly warning is said.
// - No profile: one voter; ProductionReady and the hourly ProfileNotSet warning say so.
// - Development: one voter, operator-managed TLS, the static seal, no self-init. SecurityRisk and
//   ProductionReady say DevelopmentProfile, and each hourly warning is said once over many passes.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const HARDENED = "hardened";
const DEV = "dev";
const UNSET = "unset";
const LOCK = "this object belongs to an OpenBaoCluster and only the operator changes it";
const HOURLY = ["ProfileNotSet", "DevelopmentProfile", "StaticUnsealInUse", "RootTokenStored"];
/** The ServiceAccount whose token the self-init JWT role accepts, to read the Raft peer list. */
const PEER_READER = "peer-reader";

describe("openbao security profiles on the local node", { timeout: 90 * 60_000 }, () => {
  let ctx: NodeNamespace;
  let access: ChartAccess | undefined;
  let transit: TransitOpenBao;
  let op: OperatorProcess | undefined;
  const applied = new Map<string, number>();

  const cond = (c: Json, type: string): Json | undefined =>
    (c["status"]?.conditions ?? []).find((x: Json) => x["type"] === type);
  const summary = (c: Json) =>
    JSON.stringify((c["status"]?.conditions ?? []).map((x: Json) => [x.type, x.status, x.reason]));
  /** The hourly warnings said about `name`, by reason (not a condition's transition events). */
  const warnings = async (name: string): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    const list = await ctx.getJson("events.v1.events.k8s.io");
    for (const e of list["items"] as Json[])
      if (e["regarding"]?.name === name && e["type"] === "Warning" && !/^[A-Za-z]+: /.test(e["note"] ?? ""))
        out.set(e["reason"], (out.get(e["reason"]) ?? 0) + (e["series"]?.count ?? 1));
    return out;
  };
  const passes = async (name: string) =>
    metricSum(await op!.metrics(), "openbao_reconcile_duration_seconds_count", {
      namespace: ctx.namespace,
      name,
    });
  /** Available with every replica ready; fails with the status and the pods when it does not come. */
  const formed = (name: string, replicas: number) =>
    poll(
      async () => {
        const c = await ctx.getJson(`openbaocluster/${name}`);
        return cond(c, "Available")?.status === "True" && c["status"]?.readyReplicas === replicas
          ? c
          : undefined;
      },
      20 * 60_000,
      `${name}: Available with ${replicas} ready voters`,
      3000,
    ).catch(async (e: unknown) => {
      const c: Json = await ctx.getJson(`openbaocluster/${name}`).catch(() => ({}));
      const pods = await ctx.kubectl(["get", "pods", "-o", "wide"]).catch(() => "");
      throw new Error(`${String(e)}\nstatus: ${JSON.stringify(c["status"])}\n${pods}`);
    });

  before(
    async () => {
      ctx = await nodeNamespace("profiles");
      await installOpenBaoCrd(ctx);
      access = await installChartAccess(ctx, `pr-${ctx.namespace.slice(-6)}`);
      // A binding takes effect a moment after it is created: wait until the lock refuses a
      // managed object (a server-side dry run, so nothing is stored either way).
      const probe = JSON.stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "probe", labels: { "app.kubernetes.io/managed-by": "openbao-operator" } },
      });
      await poll(
        async () =>
          ctx.kubectl(["create", "--dry-run=server", "-f", "-"], probe).then(
            () => undefined,
            (e: unknown) => (String(e).includes(LOCK) ? true : undefined),
          ),
        60_000,
        "the lock policy to be in force in the namespace",
      );
      transit = await startTransitOpenBao(ctx, { keyName: "openbao-unseal-key", mountPath: "transit/" });
      await createExternalTlsSecrets(ctx, HARDENED);
      await ctx.apply({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: PEER_READER } });
      // Started after the policies: its one start-up check must find them.
      op = await startOpenBaoOperator(
        ctx,
        {
          pollInterval: "2s",
          resyncInterval: "5s",
          admissionPolicies: `{ prefix: ${access.prefix} }`,
        },
        undefined,
        access.kubeconfigPath,
      );
      const hardened = {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: HARDENED },
        spec: {
          profile: "Hardened",
          version: BAO_DEFAULT_VERSION,
          replicas: 3,
          storage: { size: "1Gi" },
          tls: { enabled: true, mode: "External" },
          unseal: {
            type: "transit",
            transit: {
              address: transit.address,
              mountPath: "transit/",
              keyName: "openbao-unseal-key",
              tlsCACert: "/etc/bao/seal-creds/ca.crt",
            },
            credentialsSecretRef: { name: transit.credentialsSecret },
          },
          network: {
            egressRules: [
              {
                to: [{ podSelector: { matchLabels: { app: "transit" } } }],
                ports: [{ protocol: "TCP", port: 8200 }],
              },
            ],
          },
          // The one login the test gets: a JWT role for one ServiceAccount, allowed to read the
          // Raft configuration and nothing else (self-init stores no root token to use instead).
          selfInit: {
            enabled: true,
            requests: [
              { name: "enable-jwt-auth", operation: "update", path: "sys/auth/jwt", data: { type: "jwt" } },
              {
                name: "configure-jwt-auth",
                operation: "update",
                path: "auth/jwt/config",
                data: {
                  jwt_validation_pubkeys: [ctx.node.serviceAccountPublicKeyPem],
                  bound_issuer: ctx.node.addresses.serviceAccountIssuer,
                },
              },
              {
                name: "raft-peers-policy",
                operation: "update",
                path: "sys/policies/acl/raft-peers",
                data: { policy: 'path "sys/storage/raft/configuration" { capabilities = ["read"] }' },
              },
              {
                name: "raft-peers-role",
                operation: "update",
                path: "auth/jwt/role/raft-peers",
                data: {
                  role_type: "jwt",
                  bound_audiences: ["openbao-internal"],
                  user_claim: "sub",
                  bound_subject: `system:serviceaccount:${ctx.namespace}:${PEER_READER}`,
                  token_policies: ["raft-peers"],
                  token_ttl: "10m",
                },
              },
            ],
          },
        },
      };
      const dev = {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: DEV },
        spec: { profile: "Development", version: BAO_DEFAULT_VERSION, replicas: 1, storage: { size: "1Gi" } },
      };
      // No profile at all: reconciled here (upstream skips it), and told so.
      const unset = {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: UNSET },
        spec: { version: BAO_DEFAULT_VERSION, replicas: 1, storage: { size: "1Gi" } },
      };
      // Applied by the admin: the validate-openbaocluster policy judges them and admits them.
      await ctx.apply(hardened, dev, unset);
      for (const n of [HARDENED, DEV, UNSET]) applied.set(n, Date.now());
    },
    { timeout: 60 * 60_000 },
  );

  after(async () => {
    if (op && process.env["OPENBAO_TEST_DUMP"]) console.log(op.output());
    await op?.stop();
    // The bindings go before the namespace: the namespace controller is not among the identities
    // the lock admits (as upstream's), so it could not delete the operator's objects while they hold.
    await access?.remove();
    await deleteNamespace(ctx);
  });

  it("the operator, as the chart's ServiceAccount, finds the policies at start (openbao_admission_dependencies_ready 1)", async () => {
    assert.equal(metricSum(await op!.metrics(), "openbao_admission_dependencies_ready"), 1);
  });

  it("Hardened (External TLS, transit seal, self-init, egress rules): forms three voters and is ProductionReady", async () => {
    const c = await formed(HARDENED, 3);
    console.log(
      `# ${HARDENED}: Available with 3 voters ${Math.round((Date.now() - applied.get(HARDENED)!) / 1000)} s after apply`,
    );
    // Every voter in OpenBao's own peer list, read with the login self-init configured.
    const pods = [0, 1, 2].map((i) => `${HARDENED}-${i}`);
    const jwt = (await ctx.kubectl(["create", "token", PEER_READER, "--audience=openbao-internal"])).trim();
    const servers = await poll(
      async () => {
        const out = await ctx
          .kubectl(
            [
              "exec",
              "-i",
              pods[0]!,
              "--",
              "sh",
              "-c",
              'T=$(bao write -field=token auth/jwt/login role=raft-peers jwt=-) && BAO_TOKEN="$T" bao operator raft list-peers -format=json',
            ],
            jwt,
          )
          .catch(() => "");
        if (!out) return undefined;
        const list = JSON.parse(out).data.config.servers as { node_id: string; voter: boolean }[];
        return list.filter((s) => s.voter).length === 3 ? list : undefined;
      },
      300_000,
      `${HARDENED}: 3 voters in the Raft peer list`,
      2000,
    );
    assert.deepEqual(servers.map((s) => s.node_id).sort(), pods);
    assert.ok(
      servers.every((s) => s.voter),
      JSON.stringify(servers),
    );

    const ready = await poll(
      async () => {
        const x = await ctx.getJson(`openbaocluster/${HARDENED}`);
        return cond(x, "ProductionReady")?.status === "True" ? x : undefined;
      },
      120_000,
      `${HARDENED}: ProductionReady=True`,
      2000,
    ).catch(async (e: unknown) => {
      const x = await ctx.getJson(`openbaocluster/${HARDENED}`);
      throw new Error(`${String(e)}: ${JSON.stringify(cond(x, "ProductionReady"))} ${summary(x)}`);
    });
    assert.equal(cond(ready, "ProductionReady")?.reason, "ProductionReady");
    assert.equal(cond(ready, "SecurityRisk"), undefined, summary(ready));
    assert.deepEqual(
      [cond(ready, "EtcdEncryptionWarning")?.status, cond(ready, "EtcdEncryptionWarning")?.reason],
      ["True", "EtcdEncryptionUnknown"],
    );
    assert.notEqual(cond(c, "Degraded")?.status, "True", summary(c));
    // Self-init: no root token is kept, anywhere.
    const secrets = (await ctx.getJson("secrets"))["items"].map((s: Json) => s["metadata"].name as string);
    assert.ok(!secrets.includes(`${HARDENED}-root-token`), secrets.join(", "));
    // None of the hourly warnings applies to it, over several passes.
    const seen = await passes(HARDENED);
    await poll(
      async () => ((await passes(HARDENED)) >= seen + 3 ? true : undefined),
      120_000,
      `${HARDENED}: three more passes`,
    );
    const said = await warnings(HARDENED);
    for (const r of HOURLY)
      assert.equal(said.get(r), undefined, `${r} about ${HARDENED}: ${JSON.stringify([...said])}`);
    const annotations = (await ctx.getJson(`openbaocluster/${HARDENED}`))["metadata"].annotations ?? {};
    assert.deepEqual(
      Object.keys(annotations).filter((k) => /^openbao\.org\/last-.*-warning$/.test(k)),
      [],
    );
  });

  it("Development (one voter, operator-managed TLS, static seal, no self-init): SecurityRisk, ProductionReady=False, each hourly warning once", async () => {
    await formed(DEV, 1);
    console.log(
      `# ${DEV}: Available with 1 voter, checked ${Math.round((Date.now() - applied.get(DEV)!) / 1000)} s after apply`,
    );
    const c = await ctx.getJson(`openbaocluster/${DEV}`);
    assert.deepEqual(
      [cond(c, "SecurityRisk")?.status, cond(c, "SecurityRisk")?.reason],
      ["True", "DevelopmentProfile"],
    );
    assert.deepEqual(
      [cond(c, "ProductionReady")?.status, cond(c, "ProductionReady")?.reason],
      ["False", "DevelopmentProfile"],
    );
    assert.deepEqual(
      [cond(c, "EtcdEncryptionWarning")?.status, cond(c, "EtcdEncryptionWarning")?.reason],
      ["True", "EtcdEncryptionUnknown"],
    );
    const a = c["metadata"].annotations ?? {};
    for (const k of ["last-development-warning", "last-static-unseal-warning", "last-root-token-warning"])
      assert.ok(
        !Number.isNaN(Date.parse(a[`openbao.org/${k}`])),
        `openbao.org/${k} is a time: ${a[`openbao.org/${k}`]}`,
      );
    assert.equal(a["openbao.org/last-profile-not-set-warning"], undefined);
    // The root token is stored (self-init is off), which is what RootTokenStored says.
    await ctx.getJson(`secret/${DEV}-root-token`);

    // Many passes later (resync 5 s, and the pod's own changes), still once each.
    const seen = await passes(DEV);
    await poll(
      async () => ((await passes(DEV)) >= seen + 5 ? true : undefined),
      180_000,
      `${DEV}: five more passes`,
    );
    const said = await poll(
      async () => {
        const w = await warnings(DEV);
        return ["DevelopmentProfile", "StaticUnsealInUse", "RootTokenStored"].every((r) => w.has(r))
          ? w
          : undefined;
      },
      60_000,
      `${DEV}: the three warnings recorded`,
    );
    for (const r of ["DevelopmentProfile", "StaticUnsealInUse", "RootTokenStored"])
      assert.equal(said.get(r), 1, `${r} said once: ${JSON.stringify([...said])}`);
    assert.equal(said.get("ProfileNotSet"), undefined);
    // The stamps did not move either.
    const again = (await ctx.getJson(`openbaocluster/${DEV}`))["metadata"].annotations ?? {};
    for (const k of ["last-development-warning", "last-static-unseal-warning", "last-root-token-warning"])
      assert.equal(again[`openbao.org/${k}`], a[`openbao.org/${k}`], k);
  });

  it("no profile (one voter): ProductionReady=False ProfileNotSet, no SecurityRisk, ProfileNotSet said once", async () => {
    await formed(UNSET, 1);
    const c = await poll(
      async () => {
        const x = await ctx.getJson(`openbaocluster/${UNSET}`);
        return x["metadata"].annotations?.["openbao.org/last-profile-not-set-warning"] ? x : undefined;
      },
      60_000,
      `${UNSET}: the profile-not-set stamp`,
    );
    assert.deepEqual(
      [cond(c, "ProductionReady")?.status, cond(c, "ProductionReady")?.reason],
      ["False", "ProfileNotSet"],
    );
    assert.equal(cond(c, "SecurityRisk"), undefined, summary(c));
    const seen = await passes(UNSET);
    await poll(
      async () => ((await passes(UNSET)) >= seen + 3 ? true : undefined),
      180_000,
      `${UNSET}: three more passes`,
    );
    const said = await poll(
      async () => {
        const w = await warnings(UNSET);
        return ["ProfileNotSet", "StaticUnsealInUse", "RootTokenStored"].every((r) => w.has(r))
          ? w
          : undefined;
      },
      60_000,
      `${UNSET}: the three warnings recorded`,
    );
    for (const r of ["ProfileNotSet", "StaticUnsealInUse", "RootTokenStored"])
      assert.equal(said.get(r), 1, `${r} said once: ${JSON.stringify([...said])}`);
    assert.equal(said.get("DevelopmentProfile"), undefined);
  });

  it("the locks held all along: the admin may not change the operator's StatefulSet", async () => {
    const refused = await ctx.kubectl(["annotate", `statefulset/${DEV}`, "example.org/touched=yes"]).then(
      () => "",
      (e: unknown) => String(e),
    );
    assert.ok(refused.includes(LOCK), refused);
    // …and the operator itself was never refused by any of them.
    const denied = op!
      .output()
      .split("\n")
      .filter((l) => /ValidatingAdmissionPolicy|only the operator changes it|the operator may not/.test(l));
    assert.deepEqual(denied, []);
  });

  it("with the bindings in place, the clusters and then their namespace can be deleted (the kept root token has no owner)", async () => {
    // The clusters first, while the operator still has its Role in the namespace (a namespace
    // deleted with its clusters in it loses that Role early and their finalizers stay: see
    // docs/openbaocluster.md, Deleting). Retain, the default, keeps dev's root token, labelled as
    // the operator's and owned by nobody, so only the namespace controller deletes it: the lock
    // admits it in a namespace being deleted (before, the namespace stayed Terminating for good).
    await ctx.kubectl(["delete", "openbaocluster", "--all", "--wait=false"]);
    await poll(
      async () => ((await ctx.getJson("openbaoclusters"))["items"].length === 0 ? true : undefined),
      180_000,
      "the clusters to be deleted",
      2000,
    );
    await ctx.kubectl(["delete", "namespace", ctx.namespace, "--wait=false"]);
    await poll(
      async () =>
        ctx.kubectl(["get", "namespace", ctx.namespace, "-o", "json"]).then(
          () => undefined,
          (e: unknown) => (/NotFound|not found/.test(String(e)) ? true : undefined),
        ),
      300_000,
      "the namespace to be deleted",
      2000,
    ).catch(async (e: unknown) => {
      const n = await ctx.getJson(`namespace/${ctx.namespace}`).catch(() => ({}) as Json);
      const left = await ctx
        .kubectl(["get", "secrets,configmaps,services,statefulsets", "-o", "name"])
        .catch(() => "");
      throw new Error(`${String(e)}\n${JSON.stringify(n["status"]?.conditions)}\nleft: ${left}`);
    });
  });
});
