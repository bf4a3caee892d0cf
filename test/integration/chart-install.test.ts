import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { issueServerCertificate } from "../../src/runtime/pki/x509.js";
import { type DevOpenBao, startDevOpenBao } from "../../src/testenv/baodev.js";
import { baoCall } from "../../src/testenv/baohttp.js";
import { configureKubernetesAuth } from "../../src/testenv/baokubeauth.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { auditLogPath } from "../../src/testenv/node/components.js";
import { waitUntil } from "../../src/testenv/wait.js";
import { installGitLabCrds, provisionSharedSecretsAccount } from "../support/gitlab.js";
import { clientFor } from "../support/kube.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";
import { metricSum } from "../support/openbao-operator.js";

// The operator installed by its own chart on the local node, under Pod Security `restricted`, split:
// the vault target logging in to a real OpenBao with its projected token, and the openbao target
// running an OpenBaoCluster's whole life from its own pods. Then the API server's audit log is the
// judge of least privilege, per target: every call its ServiceAccount made was allowed, and every
// verb the chart grants it was used (or is named below with the reason it cannot be).

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));
const RELEASE = "po";
const PROCESS = `${RELEASE}-vault`;
const BAO_PROCESS = `${RELEASE}-openbao`;
const GL_PROCESS = `${RELEASE}-gitlab`;
const GL = "gl";
/** The ServiceAccount the chart's shared-secrets hook runs as: the administrator's, not the operator's. */
const GL_HOOK_ACCOUNT = "gitlab-manager";
const BAO = "bao";
/** Voters of the OpenBaoCluster the installed operator runs: 1, so the whole scenario fits the time a
 * run has on the shared 2-core machine (3 voters and their Raft join are openbao-workload.test.ts's). */
const VOTERS = 1;

/**
 * Reads come from the informers; a get is sent only for an object this process just wrote whose
 * watch has not shown it yet (or before an informer synced), so whether one happens is timing.
 */
const CACHE_MISS_ONLY =
  "read from an informer; a get only for this process's own write the watch has not shown yet";
/** Each process's webhook Role: its serving Secret is replaced only to renew the leaf (90 days, renewed with 30 left). */
const WEBHOOK_RENEWAL_ONLY =
  "the webhook's serving Secret is updated only when its leaf is renewed, 60 days after issue; the vault process renews one above";
/** As for openbao: what the gitlab target is granted for paths no scenario here reaches. */
const PRUNE_ONLY = "prune deletes what a new render no longer produces; no render here drops one";
/** The runtime patches an Event only to count a repeat of the same event (series); the vault scenario proves that path. */
const EVENT_REPEAT_ONLY =
  "an Event is patched only when the same event repeats; these short scenarios repeat none";
const GITLAB_UNUSED_GRANTS: Record<string, string> = {
  "update core/secrets": WEBHOOK_RENEWAL_ONLY,
  "patch events.k8s.io/events": EVENT_REPEAT_ONLY,
  "delete apps/deployments": PRUNE_ONLY,
  "delete apps/statefulsets": PRUNE_ONLY,
  "delete core/services": PRUNE_ONLY,
  "delete policy/poddisruptionbudgets": PRUNE_ONLY,
  "delete gateway.networking.k8s.io/gateways": PRUNE_ONLY,
  "delete gateway.networking.k8s.io/httproutes": PRUNE_ONLY,
  // Hook Jobs and ConfigMaps are read from the release's informers; a GET only when a pass runs
  // before the watch has shown an object the pass itself just created.
  "get batch/jobs": CACHE_MISS_ONLY,
  "get core/configmaps": CACHE_MISS_ONLY,
  // GitLabSecrets: the chart here renders the shared-secrets hook (provider job), not a GitLabSecrets
  // (gitlabsecrets.test.ts and gitlabsecrets-chart.test.ts run the controller).
  ...Object.fromEntries(
    [
      "create apps.gitlab.com/gitlabsecrets",
      "patch apps.gitlab.com/gitlabsecrets",
      "delete apps.gitlab.com/gitlabsecrets",
    ].map((g) => [g, "no GitLabSecrets rendered here: the chart's shared-secrets provider is the hook Job"]),
  ),
  "patch apps.gitlab.com/gitlabsecrets/status": "no GitLabSecrets here to report on",
  "patch core/secrets": "a GitLabSecrets adds missing keys to an existing Secret; none here",
  "list core/pods":
    "an upgrade step waiting on a restartPolicy OnFailure migrations Job counts its pods' restarts; no upgrade here (gitlab-migrations-gate.test.ts)",
};

/**
 * Verbs the chart grants the openbao target that no scenario here reaches, each with the reason it
 * is still granted. Anything else granted and unused fails the audit test.
 */
/**
 * The AdminOps plane's writes (its conditions, the operation lock) are compare-and-set: each reads
 * the cluster fresh first. Whether this scenario's cluster gets one depends on when its first
 * version is observed, so a get may or may not be logged.
 */
const FRESH_READ_ONLY =
  "read fresh only by a compare-and-set write of the AdminOps plane, which this scenario may or may not make";
const OPENBAO_UNUSED_GRANTS: Record<string, string> = {
  "update core/secrets": WEBHOOK_RENEWAL_ONLY,
  "get openbao.org/openbaoclusters": FRESH_READ_ONLY,
  "patch events.k8s.io/events": EVENT_REPEAT_ONLY,
  ...Object.fromEntries(
    [
      "core/secrets",
      "core/services",
      "core/serviceaccounts",
      "core/pods",
      "networking.k8s.io/networkpolicies",
      "networking.k8s.io/ingresses",
      "rbac.authorization.k8s.io/roles",
      "rbac.authorization.k8s.io/rolebindings",
      "storage.k8s.io/storageclasses",
      "apps/statefulsets",
      "core/configmaps",
      "policy/poddisruptionbudgets",
      // GatewayIntegrationReady reads the Gateway and its class through the cache too.
      "gateway.networking.k8s.io/gateways",
      "gateway.networking.k8s.io/gatewayclasses",
    ].map((r) => [`get ${r}`, CACHE_MISS_ONLY]),
  ),
  "update core/pods":
    "never called: RBAC lets the operator write the OpenBao pods' Role (get, update, patch on them) only if it holds those verbs",
  "patch core/pods": "never called: held for the pods' Role, as update",
  "delete core/pods":
    "after a restore the cluster's pods are restarted, and spec.runtime.restartAt restarts them one by one; no OpenBaoRestore and no restartAt here (openbao-upstream-restore-node.test.ts restores, openbao-runtime-restart.test.ts restarts)",
  // Backups and restores (the AdminOps and restore controllers) are proven by their own node
  // tests; this scenario configures no backup and makes no OpenBaoRestore.
  "get openbao.org/openbaorestores":
    "no OpenBaoRestore here: its controller reads requests from its informer",
  "patch openbao.org/openbaorestores": "the finalizer of a restore request; no OpenBaoRestore here",
  "patch openbao.org/openbaorestores/status": "the status of a restore request; no OpenBaoRestore here",
  "get batch/jobs": "executor Jobs are looked up by name before creation; no backup or restore here",
  "delete apps/statefulsets":
    "a blue-green upgrade deletes the revision that no longer serves; no upgrade here (openbao-upgrade-bluegreen.test.ts)",
  "create core/serviceaccounts/token":
    "spec.upgrade.jwtAuthRole logs in with the upgrade ServiceAccount's token; no upgrade here (openbao-upgrade-rolling.test.ts rolls with it)",
  "create batch/jobs": "executor Jobs run backups and restores; none here",
  // Restore tests make a throwaway cluster and its OpenBaoRestore, and delete both
  // (openbao-restore-test-node.test.ts); this scenario configures no spec.backup.restoreTest.
  "create openbao.org/openbaoclusters": "a restore test's throwaway cluster; no restore test here",
  "delete openbao.org/openbaoclusters": "a restore test's throwaway cluster; no restore test here",
  "create openbao.org/openbaorestores": "a restore test's restore request; no restore test here",
  "delete openbao.org/openbaorestores": "a restore test's restore request; no restore test here",
  "delete core/services":
    "the read-replica Service is deleted when spec.readReplicas.service is turned off; it needs a second StatefulSet",
  "delete core/configmaps":
    "the Gateway API backend-trust ConfigMap is deleted when spec.gateway is turned off; the node serves no Gateway API",
  "get core/persistentvolumeclaims":
    "a resize reads the claims only where the StorageClass allows expansion; local-path does not",
  "patch core/persistentvolumeclaims":
    "a resize grows the claims only where the StorageClass allows expansion",
  "create core/persistentvolumeclaims":
    "auditFileStorage and tls.acme.sharedCache create their ReadWriteMany claim in ManagedPVC mode; neither here (openbao-shared-claims-api.test.ts)",
  // The node serves HTTPRoute (the gitlab scenario installs its CRD before the chart), so the
  // cluster's routes are watched and the look for a leftover one reads that cache; writing routes
  // needs spec.gateway and a Gateway.
  ...Object.fromEntries(
    ["httproutes", "tlsroutes", "backendtlspolicies"].flatMap((r) =>
      ["create", "patch", "delete"].map((v) => [
        `${v} gateway.networking.k8s.io/${r}`,
        "spec.gateway is not used here: routes need a Gateway, and the node runs no Gateway API implementation",
      ]),
    ),
  ),
  "get gateway.networking.k8s.io/httproutes": CACHE_MISS_ONLY,
  ...Object.fromEntries(
    ["get", "list", "watch", "create", "patch", "delete"].map((v) => [
      `${v} monitoring.coreos.com/servicemonitors`,
      "spec.observability.metrics is not used here and the node serves no Prometheus Operator CRD (openbao-metrics-api.test.ts writes and deletes one)",
    ]),
  ),
  "get networking.k8s.io/ingressclasses":
    "spec.ingress.className is not used here (openbao-ingress-readiness-api.test.ts reads one)",
  // Clusters without (this part of) the Gateway API: the informers of these kinds start only once
  // their CRDs are served, and the node's Gateway API has HTTPRoute alone.
  ...Object.fromEntries(
    ["tlsroutes", "backendtlspolicies"].flatMap((r) =>
      ["get", "list", "watch"].map((v) => [
        `${v} gateway.networking.k8s.io/${r}`,
        "not served on the node (its Gateway API CRDs are HTTPRoute, Gateway, GatewayClass): watched only where the CRD is installed",
      ]),
    ),
  ),
};

// biome-ignore lint/suspicious/noExplicitAny: API objects and audit events are read loosely
type Obj = Record<string, any>;

// One install for every scenario (it takes minutes): the hooks are the file's own, and each target's
// scenarios are a describe of their own, so each gets the runner's whole time budget.
let rel: NodeNamespace;
let seeds: NodeNamespace;
let baos: NodeNamespace;
let gls: NodeNamespace;
let bao: DevOpenBao;
let helm: string;
let rendered: Obj[] = [];

const helmRun = (args: string[]) =>
  runCommand(helm, [...args, "--kubeconfig", rel.node.kubeconfigPath, "--namespace", rel.namespace]);

before(async () => {
  helm = await ensureHelm();
  rel = await nodeNamespace("po-chart");
  seeds = await nodeNamespace("po-seeds");
  baos = await nodeNamespace("po-bao");
  // The fixture chart's workloads are not written for restricted Pod Security: only the operator's
  // own namespace and the other targets' enforce it.
  gls = await nodeNamespace("po-gl");
  const admin = clientFor(rel.node.kubeconfigPath);
  try {
    await installGitLabCrds(admin);
    await provisionSharedSecretsAccount(admin, gls.namespace, GL_HOOK_ACCOUNT);
  } finally {
    admin.close();
  }
  for (const ns of [rel.namespace, seeds.namespace, baos.namespace]) {
    await rel.kubectl([
      "label",
      "namespace",
      ns,
      "pod-security.kubernetes.io/enforce=restricted",
      "pod-security.kubernetes.io/enforce-version=latest",
    ]);
  }
  // OpenBao in the node's network: pods reach it at the node's address, and so does this process.
  bao = await startDevOpenBao({
    host: rel.node.addresses.nodeIp,
    wrap: (argv) => rel.node.inCluster(argv),
  });
  await configureKubernetesAuth(
    bao,
    { server: rel.node.server, caPem: rel.node.caPem, kubeconfigPath: rel.node.kubeconfigPath },
    {
      role: PROCESS,
      serviceAccount: PROCESS,
      namespace: rel.namespace,
      audience: "vault",
      policies: ["seeds"],
      policyHcl: {
        seeds: `path "secret/data/allowed/*" { capabilities = ["create", "read", "update"] }
path "secret/metadata/allowed/*" { capabilities = ["create", "read", "update", "delete"] }`,
      },
    },
  );
  const values = {
    targets: {
      vault: {
        enabled: true,
        namespaces: [seeds.namespace],
        config: {
          allowDelete: true,
          resyncInterval: "20s",
          backend: {
            address: bao.addr,
            allowHttp: true,
            auth: { kubernetes: { role: PROCESS, audience: "vault" } },
          },
        },
      },
      openbao: {
        enabled: true,
        namespaces: [baos.namespace],
        config: { pollInterval: "2s", resyncInterval: "10s" },
      },
      gitlab: {
        enabled: true,
        namespaces: [gls.namespace],
        config: { requeueInterval: "5s", serviceAccountName: GL_HOOK_ACCOUNT },
      },
    },
  };
  const args = [
    "--set-json",
    `targets=${JSON.stringify(values.targets)}`,
    "--set",
    "image.pullPolicy=Never",
    // Every object of our kinds below goes through the processes' admission webhooks.
    "--set",
    "webhook.enabled=true",
    // Each process looks at its serving certificate every 5 s, so a renewal happens within the test.
    "--set",
    "webhook.renewCheckEvery=5s",
    // The openbao target's admission policies: the whole scenario runs under their locks.
    "--set",
    "admissionPolicies.enabled=true",
  ];
  const out = await helmRun(["template", RELEASE, CHART, ...args]);
  rendered = parseAllDocuments(out.stdout).map((d) => d.toJS() as Obj);
  await helmRun(["install", RELEASE, CHART, ...args, "--wait", "--timeout", "5m"]);
});

after(async () => {
  // While the operator still runs, so the cluster's finalizer is served (a failed test may leave it).
  await baos?.kubectl(["delete", "openbaoclusters", "--all", "--timeout=120s"]).catch(() => undefined);
  await gls?.kubectl(["delete", "gitlabcores", "--all", "--timeout=120s"]).catch(() => undefined);
  await helmRun(["uninstall", RELEASE, "--wait", "--timeout", "2m"]).catch(() => undefined);
  await bao?.stop();
  await deleteNamespace(seeds);
  await deleteNamespace(baos);
  await deleteNamespace(gls);
  await deleteNamespace(rel);
});

/** The pods of one process (its Deployment's selector). */
const podsOf = async (process: string): Promise<Obj[]> =>
  JSON.parse(
    await rel.kubectl([
      "get",
      "pods",
      "-l",
      `app.kubernetes.io/component=${process.slice(RELEASE.length + 1)}`,
      "-o",
      "json",
    ]),
  ).items;
/** GET /metrics on a pod over HTTPS from inside the node's network: status code and body. */
const scrape = async (pod: Obj, token: string): Promise<{ code: string; body: string }> => {
  const argv = [
    "curl",
    "-sk",
    "-w",
    "\n%{http_code}",
    "-H",
    `Authorization: Bearer ${token}`,
    `https://${pod.status.podIP}:8443/metrics`,
  ];
  const [command, ...args] = rel.node.inCluster(argv);
  const out = (await runCommand(command!, args)).stdout;
  const cut = out.lastIndexOf("\n");
  return { code: out.slice(cut + 1), body: out.slice(0, cut) };
};
let scraperToken: string | undefined;
/** A token allowed nothing but GET /metrics (created once, on first use). */
const scraper = async (): Promise<string> => {
  if (scraperToken) return scraperToken;
  await rel.apply(
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "scraper", namespace: rel.namespace } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: `${rel.namespace}-scraper` },
      rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: `${rel.namespace}-scraper` },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: `${rel.namespace}-scraper`,
      },
      subjects: [{ kind: "ServiceAccount", name: "scraper", namespace: rel.namespace }],
    },
  );
  scraperToken = (await rel.kubectl(["create", "token", "scraper"])).trim();
  return scraperToken;
};
/** The pod holding a target's Lease. */
const leaderOf = async (process: string, target: string): Promise<Obj> => {
  const holder: string = (await rel.getJson(`lease/${process}-${target}`)).spec.holderIdentity ?? "";
  const pod = (await podsOf(process)).find((p) => holder.includes(p.metadata.name));
  assert.ok(pod, `the Lease ${process}-${target} is held by a pod of ${process} (${holder})`);
  return pod;
};

describe("the chart installed on the local node: split processes, restricted Pod Security", () => {
  it("runs two replicas per process admitted under restricted Pod Security, one leader per target", async () => {
    for (const [process, target] of [
      [PROCESS, "vault"],
      [BAO_PROCESS, "openbao"],
      [GL_PROCESS, "gitlab"],
    ] as const) {
      const deployment = await rel.getJson(`deployment/${process}`);
      assert.equal(deployment.status.availableReplicas, 2, process);
      assert.equal((await podsOf(process)).length, 2, process);
      await leaderOf(process, target);
    }
    const events = await rel.kubectl(["get", "events", "-o", "json"]);
    assert.doesNotMatch(events, /violates PodSecurity/);
  });

  it("serves /metrics over HTTPS to a caller allowed to get it, and refuses one that is not", async () => {
    const allowed = await scraper();
    const denied = (await rel.kubectl(["create", "token", "default"])).trim();
    // Each process checks callers with its own ServiceAccount (TokenReview, SubjectAccessReview).
    for (const process of [PROCESS, BAO_PROCESS, GL_PROCESS]) {
      const [pod] = await podsOf(process);
      // RBAC grants reach the authorizer a moment after they are written: wait for the 200.
      await waitUntil(async () => (await scrape(pod!, allowed)).code === "200", {
        what: `/metrics of ${process} to answer the scraper`,
        timeoutMs: 60_000,
      });
      assert.equal((await scrape(pod!, denied)).code, "403", process);
    }
  });
});

describe("the vault target through the installed chart", () => {
  it("seeds a path with the projected token, and deletes it with its object", async () => {
    const seed = {
      apiVersion: "ohmlab.fr/v1alpha1",
      kind: "VaultSeed",
      metadata: { name: "allowed", namespace: seeds.namespace },
      spec: {
        path: "secret/allowed/app",
        data: { password: "<random:24>", user: "app" },
        deletionPolicy: "Delete",
      },
    };
    const denied = {
      apiVersion: "ohmlab.fr/v1alpha1",
      kind: "VaultSeed",
      metadata: { name: "denied", namespace: seeds.namespace },
      spec: { path: "secret/denied/app", data: { user: "app" } },
    };
    await seeds.apply(seed, denied);
    await seeds.waitFor("vaultseed/allowed", "condition=Ready", 300);
    const kv = await baoCall(bao.addr, bao.rootToken, "GET", "secret/data/allowed/app");
    assert.equal(kv.data.data.user, "app");
    assert.equal(kv.data.data.password.length, 24);
    await seeds.waitFor(
      "vaultseed/denied",
      "jsonpath={.status.conditions[?(@.type=='Ready')].reason}=Forbidden",
      300,
    );
    // A path deleted by hand comes back at the next resync, twice: the second identical Event is
    // the same series, so the recorder patches its count (the chart's `patch` on Events).
    for (let i = 0; i < 2; i++) {
      await baoCall(bao.addr, bao.rootToken, "DELETE", "secret/metadata/allowed/app");
      await waitUntil(async () => pathExists(bao, "secret/data/allowed/app"), {
        what: `the hand-deleted path to be seeded again (${i + 1})`,
        timeoutMs: 180_000,
      });
    }
    await seeds.kubectl(["delete", "vaultseed", "allowed", "--timeout=120s"]);
    await waitUntil(async () => !(await pathExists(bao, "secret/metadata/allowed/app")), {
      what: "the seeded path to be deleted with its object",
      timeoutMs: 120_000,
    });
  });
});

describe("the openbao target through the installed chart", () => {
  it(`initializes an OpenBaoCluster of ${VOTERS} voter(s), run by the installed operator's pods`, async () => {
    await baos.apply({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name: BAO, namespace: baos.namespace },
      spec: {
        version: BAO_DEFAULT_VERSION,
        replicas: VOTERS,
        storage: { size: "128Mi" },
        deletionPolicy: "DeleteAll",
        // An Ingress now, dropped later: the operator deletes what it no longer wants.
        ingress: { enabled: true, host: "bao.chart.test" },
        configuration: { raft: { autopilot: { serverStabilizationTime: "5s" } } },
      },
    });
    const on = `openbaocluster/${BAO}`;
    await baos.waitFor(on, "jsonpath={.status.initialized}=true", 600);
    await baos.waitFor(on, `jsonpath={.status.readyReplicas}=${VOTERS}`, 900);
    await baos.waitFor(on, "jsonpath={.status.phase}=Running", 300);
    const cluster = await baos.getJson(on);
    const cond = (type: string) => cluster.status.conditions.find((c: Obj) => c.type === type);
    assert.equal(cond("OpenBaoInitialized").status, "True");
    assert.equal(cond("OpenBaoSealed").status, "False");
    assert.ok((await baos.getJson(`secret/${BAO}-root-token`)).data.token, "the root token is kept");
    assert.ok(await baos.getJson(`ingress/${BAO}`), "the Ingress the spec asks for");
    // All of it under the chart's locks, which are in force: even a cluster admin's edit of an owned
    // object is refused (docs/admission.md lists who may write them).
    const edit = await baos.kubectl(["annotate", `configmap/${BAO}-config`, "example.test/edited=yes"]).then(
      () => "admitted",
      (e: Error) => e.message,
    );
    assert.match(edit, /this object belongs to an OpenBaoCluster and only the operator changes it/);

    // Who did it: the Events name the pod that leads the openbao target, no process outside the node.
    const leader = await leaderOf(BAO_PROCESS, "openbao");
    const events: Obj[] = JSON.parse(
      await baos.kubectl(["get", "events.events.k8s.io", "-o", "json"]),
    ).items.filter((e: Obj) => e.regarding?.name === BAO && e.regarding?.kind === "OpenBaoCluster");
    assert.ok(events.length > 0, "the operator recorded Events on the cluster");
    for (const e of events) {
      assert.equal(e.reportingController, "platform-operator/openbao");
      assert.ok(
        (await podsOf(BAO_PROCESS)).some((p) => e.reportingInstance.includes(p.metadata.name)),
        `Event ${e.reason} reported by ${e.reportingInstance}, a pod of ${BAO_PROCESS}`,
      );
    }
    // Its metrics, from the leading pod, to a caller allowed to read them.
    const { code, body } = await scrape(leader, await scraper());
    assert.equal(code, "200");
    assert.equal(metricSum(body, "openbao_cluster_initialized", { name: BAO }), 1);
    assert.equal(metricSum(body, "openbao_cluster_ready_replicas", { name: BAO }), VOTERS);
    // The chart's admission policies were in place when the process started, and let it all happen.
    assert.equal(metricSum(body, "openbao_admission_dependencies_ready"), 1);
  });

  it("deletes the Ingress the spec drops, and refuses a resize local-path cannot do", async () => {
    const on = `openbaocluster/${BAO}`;
    await baos.kubectl(["patch", on, "--type", "merge", "-p", '{"spec":{"ingress":{"enabled":false}}}']);
    await baos.waitFor(`ingress/${BAO}`, "delete", 120);
    // A bigger volume: the operator looks up the claims' StorageClass and says why it cannot grow them.
    await baos.kubectl(["patch", on, "--type", "merge", "-p", '{"spec":{"storage":{"size":"256Mi"}}}']);
    await baos.waitFor(
      on,
      "jsonpath={.status.conditions[?(@.type=='Degraded')].reason}=StorageResizeNotSupported",
      180,
    );
  });

  it("deletes the cluster with deletionPolicy DeleteAll: its claims and Secrets go with it", async () => {
    const claims = async () =>
      JSON.parse(await baos.kubectl(["get", "pvc", "-l", `openbao.org/cluster=${BAO}`, "-o", "json"])).items;
    assert.equal((await claims()).length, VOTERS, "one claim per voter before deletion");
    await baos.kubectl(["delete", `openbaocluster/${BAO}`, "--timeout=300s"]);
    await waitUntil(async () => (await claims()).length === 0, {
      what: "the data claims to be deleted",
      timeoutMs: 120_000,
    });
    const secrets: string[] = JSON.parse(await baos.kubectl(["get", "secrets", "-o", "json"])).items.map(
      (x: Obj) => x.metadata.name,
    );
    assert.ok(!secrets.includes(`${BAO}-root-token`), `root token left: ${secrets.join(", ")}`);
    assert.ok(!secrets.includes(`${BAO}-unseal-key`), `seal key left: ${secrets.join(", ")}`);
  });
});

describe("the gitlab target through the installed chart", () => {
  it("installs a GitLabCore from the image's bundled charts: hooks ran, objects applied and owned", async () => {
    await gls.apply({
      apiVersion: "apps.gitlab.com/v2alpha1",
      kind: "GitLabCore",
      metadata: { name: GL, namespace: gls.namespace },
      spec: {
        version: { type: "Static", version: "10.3.0" },
        hostname: "gitlab.example.com",
        chart: {
          values: {
            "shared-secrets": {
              serviceAccount: { create: false, name: GL_HOOK_ACCOUNT },
              rbac: { create: false },
            },
            global: { ingress: { enabled: false }, gatewayApi: { enabled: true } },
          },
        },
      },
    });
    const on = `gitlabcore/${GL}`;
    await gls.waitFor(on, "jsonpath={.status.phase}=Running", 600);
    const core = await gls.getJson(on);
    assert.equal(core.status.version, "10.3.0", "the chart the image bundles");
    assert.equal(core.status.hooksVersion, "10.3.0", "the release's hooks ran");
    // The shared-secrets hook Job ran in the cluster and created the Secrets.
    for (const name of [`${GL}-gitlab-shell-secret`, `${GL}-rails-secret`])
      assert.ok(await gls.getJson(`secret/${name}`), `hook-created Secret ${name}`);
    // Applied objects are controlled by the GitLabCore and written by the operator's field manager.
    for (const name of [
      `deployment/${GL}-webservice`,
      `statefulset/${GL}-gitaly`,
      `service/${GL}-webservice`,
    ]) {
      // kubectl leaves managedFields out of its output unless asked.
      const live = JSON.parse(await gls.kubectl(["get", name, "-o", "json", "--show-managed-fields"]));
      const ref = live.metadata.ownerReferences?.find((r: Obj) => r.controller);
      assert.equal(ref?.uid, core.metadata.uid, `${name} is controlled by the GitLabCore`);
      assert.ok(
        live.metadata.managedFields.some(
          (m: Obj) => m.manager === "gitlabcore-controller" && m.operation === "Apply",
        ),
        `${name} applied by gitlabcore-controller`,
      );
    }
    // By the installed pods: the Events name a pod of the gitlab process.
    const pods = (await podsOf(GL_PROCESS)).map((p) => p.metadata.name as string);
    const events: Obj[] = JSON.parse(
      await gls.kubectl(["get", "events.events.k8s.io", "-o", "json"]),
    ).items.filter((e: Obj) => e.regarding?.kind === "GitLabCore");
    assert.ok(events.length > 0, "the operator recorded Events on the GitLabCore");
    for (const e of events)
      assert.ok(
        pods.some((p) => e.reportingInstance.includes(p)),
        `Event ${e.reason} from ${e.reportingInstance}`,
      );
  });

  it("deletes the GitLabCore: its cluster-scoped GatewayClass goes with it", async () => {
    await gls.kubectl(["delete", `gitlabcore/${GL}`, "--timeout=300s"]);
    const classes: Obj[] = JSON.parse(
      await gls.kubectl([
        "get",
        "gatewayclasses",
        "-l",
        `operator.gitlab.com/release-namespace=${gls.namespace}`,
        "-o",
        "json",
      ]),
    ).items;
    assert.deepEqual(
      classes.map((c) => c.metadata.name),
      [],
    );
  });
});

/** The API server's refusal of `objects` (kubectl's stderr), or undefined when it admitted them. */
const refusalOf = async (ns: NodeNamespace, ...objects: Obj[]): Promise<string | undefined> =>
  ns.apply(...objects).then(
    () => undefined,
    (e: Error) => e.message,
  );

const kmsSealWithoutPlugin = (): Obj => ({
  apiVersion: "openbao.org/v1alpha1",
  kind: "OpenBaoCluster",
  metadata: { name: "badseal", namespace: baos.namespace },
  spec: {
    version: BAO_DEFAULT_VERSION,
    replicas: 1,
    storage: { size: "128Mi" },
    unseal: { type: "kms", kms: { name: "cloudhsm" } },
  },
});

describe("admission through the installed chart: the API server calls each process's webhook", () => {
  it("refuses bad objects of every kind naming the field, and a path another object holds; good ones are admitted", async () => {
    // Each ValidatingWebhookConfiguration got its process's CA (the chart ships it without one).
    for (const process of [PROCESS, BAO_PROCESS, GL_PROCESS]) {
      const vwc = JSON.parse(
        await rel.kubectl(["get", "validatingwebhookconfiguration", process, "-o", "json"]),
      );
      for (const w of vwc.webhooks as Obj[])
        assert.match(
          Buffer.from(w.clientConfig.caBundle ?? "", "base64").toString(),
          /BEGIN CERTIFICATE/,
          `${process}: ${w.name} has the operator's CA`,
        );
    }
    const seedOf = (name: string, spec: Obj) => ({
      apiVersion: "ohmlab.fr/v1alpha1",
      kind: "VaultSeed",
      metadata: { name, namespace: seeds.namespace },
      spec,
    });
    // rotate.keys names a key data does not declare: the CRD's schema admits it, the webhook does not.
    const bad = await refusalOf(
      seeds,
      seedOf("bad", {
        path: "secret/allowed/bad",
        data: { a: "<random:8>" },
        rotate: { token: "t", keys: ["nope"] },
      }),
    );
    assert.match(
      bad ?? "admitted",
      new RegExp(
        `admission webhook "vault\\.ohmlab\\.fr" denied the request: VaultSeed ${seeds.namespace}/bad is invalid: .*rotate\\.keys names nope`,
      ),
    );
    assert.equal(
      await refusalOf(seeds, seedOf("holder", { path: "secret/allowed/held", data: { a: "x" } })),
      undefined,
    );
    // The second object on a path: refused once the process's cache holds the first (its watch).
    let twin: string | undefined;
    await waitUntil(
      async () => {
        twin = await refusalOf(seeds, seedOf("twin", { path: "secret/allowed/held", data: { b: "y" } }));
        if (twin === undefined) await seeds.kubectl(["delete", "vaultseed", "twin", "--wait=false"]);
        return twin !== undefined;
      },
      { what: "the second VaultSeed on a path to be refused", timeoutMs: 30_000 },
    );
    assert.match(twin!, /path secret\/allowed\/held is also seeded by .*\/holder/);
    await seeds.kubectl(["delete", "vaultseed", "holder", "--timeout=120s"]);

    // A KMS seal whose plugin spec.plugins does not declare: the CRD's CEL rules cannot see it, and
    // OpenBao would crash-loop, unable to unseal; the webhook names the field.
    const sealed = await refusalOf(baos, kmsSealWithoutPlugin());
    assert.match(
      sealed ?? "admitted",
      /admission webhook "openbao\.openbao\.org" denied the request: OpenBaoCluster .*\/badseal is invalid: spec\.unseal\.kms\.name: names KMS plugin "cloudhsm", which spec\.plugins does not declare/,
    );

    // Values the bundled chart's values.schema.json refuses (edition is ce or ee): named with the field.
    const values = await refusalOf(gls, {
      apiVersion: "apps.gitlab.com/v2alpha1",
      kind: "GitLabCore",
      metadata: { name: "badvalues", namespace: gls.namespace },
      spec: {
        version: { type: "Static", version: "10.3.0" },
        hostname: "gitlab.example.com",
        chart: { values: { global: { edition: "xe" } } },
      },
    });
    assert.match(
      values ?? "admitted",
      /admission webhook "gitlab\.apps\.gitlab\.com" denied the request: GitLabCore .*\/badvalues is invalid: .*global\.edition/,
    );
  });

  it("a leaf due for renewal is renewed by the process itself, of the same CA, and admission goes on", async () => {
    const secretName = `${PROCESS}-webhook-tls`;
    const read = async () =>
      JSON.parse(await rel.kubectl(["get", "secret", secretName, "-o", "json"])).data as Record<
        string,
        string
      >;
    const stored = await read();
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    const unb64 = (s: string | undefined) => Buffer.from(s ?? "", "base64").toString();
    // A leaf of the operator's own CA with a minute left: far less than a third of its 90 days, so
    // the next look (every 5 s here) must replace it. It is never served: renewed on the same look.
    const due = issueServerCertificate(
      { certPem: unb64(stored["ca.crt"]), keyPem: unb64(stored["ca.key"]) },
      {
        commonName: `${PROCESS}-webhook.${rel.namespace}.svc`,
        names: [`${PROCESS}-webhook.${rel.namespace}.svc`],
        now: new Date(),
        validityMs: 60_000,
      },
    );
    await rel.kubectl([
      "patch",
      "secret",
      secretName,
      "--type=merge",
      "-p",
      JSON.stringify({ data: { "tls.crt": b64(due.certPem), "tls.key": b64(due.keyPem) } }),
    ]);
    let renewed: Record<string, string> = {};
    await waitUntil(
      async () => {
        renewed = await read();
        return renewed["tls.crt"] !== b64(due.certPem) && renewed["tls.crt"] !== stored["tls.crt"];
      },
      { what: `${PROCESS} to renew the leaf in ${secretName}`, timeoutMs: 60_000 },
    );
    assert.equal(renewed["ca.crt"], stored["ca.crt"], "the same CA, which the API server already trusts");
    const leaf = new X509Certificate(unb64(renewed["tls.crt"]));
    assert.ok(
      Date.parse(leaf.validTo) - Date.now() > 80 * 86_400_000,
      `a 90-day leaf (valid to ${leaf.validTo})`,
    );
    assert.match(leaf.subjectAltName ?? "", new RegExp(`DNS:${PROCESS}-webhook\\.${rel.namespace}\\.svc`));

    const seed = (name: string, spec: Obj) => ({
      apiVersion: "ohmlab.fr/v1alpha1",
      kind: "VaultSeed",
      metadata: { name, namespace: seeds.namespace },
      spec,
    });
    assert.match(
      (await refusalOf(
        seeds,
        seed("bad-after", {
          path: "secret/allowed/bad-after",
          data: { a: "x" },
          rotate: { token: "t", keys: ["b"] },
        }),
      )) ?? "admitted",
      /denied the request: VaultSeed .*\/bad-after is invalid: .*rotate\.keys names b/,
    );
    assert.equal(
      await refusalOf(seeds, seed("good-after", { path: "secret/allowed/good-after", data: { a: "x" } })),
      undefined,
    );
    await seeds.kubectl(["delete", "vaultseed", "good-after", "--timeout=120s"]);
  });

  it("with a process stopped, writes of its kinds fail closed and other writes still succeed", async () => {
    const scale = (replicas: number) =>
      rel.kubectl(["scale", `deployment/${PROCESS}`, `--replicas=${replicas}`]);
    await scale(0);
    try {
      await waitUntil(async () => (await podsOf(PROCESS)).length === 0, {
        what: `the pods of ${PROCESS} to be gone`,
        timeoutMs: 120_000,
      });
      const seed = {
        apiVersion: "ohmlab.fr/v1alpha1",
        kind: "VaultSeed",
        metadata: { name: "unchecked", namespace: seeds.namespace },
        spec: { path: "secret/allowed/unchecked", data: { a: "x" } },
      };
      assert.match(
        (await refusalOf(seeds, seed)) ?? "admitted",
        /failed calling webhook "vault\.ohmlab\.fr"/,
      );
      const map = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "still-written", namespace: seeds.namespace },
      };
      assert.equal(await refusalOf(seeds, map), undefined, "a ConfigMap is never sent to the webhook");
      // The other processes' kinds are theirs: still checked and admitted.
      assert.match(
        (await refusalOf(baos, kmsSealWithoutPlugin())) ?? "admitted",
        /denied the request: OpenBaoCluster .*spec\.unseal\.kms\.name: names KMS plugin/,
      );
    } finally {
      await scale(2);
      await rel.kubectl(["rollout", "status", `deployment/${PROCESS}`, "--timeout=180s"]);
    }
  });
});

describe("least privilege, judged by the API server's audit log", () => {
  it("made only calls the chart allows, and used every verb the chart grants the vault target", async () => {
    // Its webhook leaf is renewed above: every verb granted to the vault process is used.
    await auditFor(PROCESS, {});
  });

  it("made only calls the chart allows, and used every verb the chart grants the openbao target but the named ones", async () => {
    await auditFor(BAO_PROCESS, OPENBAO_UNUSED_GRANTS);
  });

  it("made only calls the chart allows, and used every verb the chart grants the gitlab target but the named ones", async () => {
    await auditFor(GL_PROCESS, GITLAB_UNUSED_GRANTS);
  });
});

/**
 * The audit log judges one process's ServiceAccount: nothing refused, nothing used that is not
 * granted, and every granted verb used unless `unused` names it with a reason.
 */
async function auditFor(process: string, unused: Record<string, string>): Promise<void> {
  const user = `system:serviceaccount:${rel.namespace}:${process}`;
  const granted = grantedTo(rendered, process);
  for (const key of Object.keys(unused)) assert.ok(granted.includes(key), `exception ${key} is not granted`);
  const expected = granted.filter((g) => !(g in unused));
  const used = () => usedBy(auditLogPath(rel.node.dir), user);
  // Some calls come late (a watch is logged when its response starts): wait for every granted
  // verb, and let the assertions below say what is missing if one never comes.
  await waitUntil(async () => expected.every((g) => used().calls.has(g)), {
    what: `every granted verb of ${process} to appear in the audit log`,
    timeoutMs: 120_000,
  }).catch(() => undefined);
  const { calls, refused } = used();
  assert.deepEqual(refused, [], `calls the API server refused ${process}`);
  const idle = expected.filter((g) => !calls.has(g));
  assert.deepEqual(idle, [], `granted to ${process} but never used (used: ${[...calls].sort().join(", ")})`);
  const ungranted = [...calls].filter((c) => !granted.includes(c));
  assert.deepEqual(ungranted, [], `used by ${process} but not granted (would have been refused)`);
  // A repeated event is timing: whether one repeats in a run proves nothing either way.
  const excepted = Object.keys(unused).filter(
    (g) =>
      calls.has(g) &&
      unused[g] !== EVENT_REPEAT_ONLY &&
      unused[g] !== CACHE_MISS_ONLY &&
      unused[g] !== FRESH_READ_ONLY,
  );
  assert.deepEqual(excepted, [], `${process} used these after all: drop them from the exceptions`);
}

async function pathExists(bao: DevOpenBao, path: string): Promise<boolean> {
  try {
    await baoCall(bao.addr, bao.rootToken, "GET", path);
    return true;
  } catch {
    return false;
  }
}

/** `verb group/resource[/subresource]` keys the chart's Roles and ClusterRoles grant a ServiceAccount. */
function grantedTo(objs: Obj[], serviceAccount: string): string[] {
  const bound = new Set(
    objs
      .filter(
        (o) =>
          (o?.kind === "RoleBinding" || o?.kind === "ClusterRoleBinding") &&
          o.subjects.some((s: Obj) => s.name === serviceAccount),
      )
      .map((b) => `${b.roleRef.kind}/${b.roleRef.name}`),
  );
  const keys = new Set<string>();
  for (const role of objs.filter((o) => bound.has(`${o?.kind}/${o?.metadata?.name}`))) {
    for (const rule of role.rules as Obj[]) {
      for (const group of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          for (const verb of rule.verbs) keys.add(`${verb} ${group || "core"}/${resource}`);
        }
      }
    }
  }
  return [...keys].sort();
}

/** What the ServiceAccount did, from the API server's audit log. */
function usedBy(logPath: string, user: string): { calls: Set<string>; refused: string[] } {
  const calls = new Set<string>();
  const refused: string[] = [];
  for (const line of readFileSync(logPath, "utf8").split("\n")) {
    if (!line.includes(user)) continue;
    let event: Obj;
    try {
      event = JSON.parse(line) as Obj;
    } catch {
      continue; // the line the API server is writing right now
    }
    // A watch is logged when its response starts; it completes only when the watch ends.
    const done =
      event.stage === "ResponseComplete" || (event.verb === "watch" && event.stage === "ResponseStarted");
    if (event.user?.username !== user || !done || !event.objectRef) continue;
    const ref = event.objectRef;
    const resource = ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource;
    const key = `${event.verb} ${ref.apiGroup || "core"}/${resource}`;
    if (event.responseStatus?.code === 403) refused.push(`${key} in ${ref.namespace ?? "(cluster)"}`);
    else calls.add(key);
    // A server-side apply that creates its object is authorized as a create as well as a patch; the
    // log shows it as a patch answered 201.
    if (event.verb === "patch" && event.responseStatus?.code === 201)
      calls.add(`create ${ref.apiGroup || "core"}/${resource}`);
  }
  return { calls, refused };
}
