import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { type DevOpenBao, startDevOpenBao } from "../../src/testenv/baodev.js";
import { baoCall } from "../../src/testenv/baohttp.js";
import { configureKubernetesAuth } from "../../src/testenv/baokubeauth.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { auditLogPath } from "../../src/testenv/node/components.js";
import { waitUntil } from "../../src/testenv/wait.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";

// The operator installed by its own chart on the local node, under Pod Security `restricted`, with
// the vault target logging in to a real OpenBao with its projected token. Then the API server's
// audit log is the judge of least privilege: every call the operator made was allowed, and every
// verb the chart grants was used.

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));
const RELEASE = "po";
const PROCESS = `${RELEASE}-vault`;

// biome-ignore lint/suspicious/noExplicitAny: API objects and audit events are read loosely
type Obj = Record<string, any>;

describe("the chart installed on the local node (restricted Pod Security, audited)", () => {
  let rel: NodeNamespace;
  let seeds: NodeNamespace;
  let bao: DevOpenBao;
  let helm: string;
  let rendered: Obj[] = [];

  const helmRun = (args: string[]) =>
    runCommand(helm, [...args, "--kubeconfig", rel.node.kubeconfigPath, "--namespace", rel.namespace]);

  before(async () => {
    helm = await ensureHelm();
    rel = await nodeNamespace("po-chart");
    seeds = await nodeNamespace("po-seeds");
    for (const ns of [rel.namespace, seeds.namespace]) {
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
      },
      image: { pullPolicy: "Never" },
      metrics: { secure: true },
    };
    const args = [
      "--set-json",
      `targets=${JSON.stringify(values.targets)}`,
      "--set",
      "image.pullPolicy=Never",
    ];
    const out = await helmRun(["template", RELEASE, CHART, ...args]);
    rendered = parseAllDocuments(out.stdout).map((d) => d.toJS() as Obj);
    await helmRun(["install", RELEASE, CHART, ...args, "--wait", "--timeout", "5m"]);
  });

  after(async () => {
    await helmRun(["uninstall", RELEASE, "--wait", "--timeout", "2m"]).catch(() => undefined);
    await bao?.stop();
    await deleteNamespace(seeds);
    await deleteNamespace(rel);
  });

  it("runs two replicas admitted under restricted Pod Security, one leader per target", async () => {
    const deployment = await rel.getJson(`deployment/${PROCESS}`);
    assert.equal(deployment.status.availableReplicas, 2);
    const lease = await rel.getJson(`lease/${PROCESS}-vault`);
    const pods: Obj[] = (await rel.getJson("pods")).items;
    const holder: string = lease.spec.holderIdentity;
    assert.ok(
      pods.some((p) => holder.includes(p.metadata.name)),
      `the Lease is held by one of the pods (${holder})`,
    );
    const events = await rel.kubectl(["get", "events", "-o", "json"]);
    assert.doesNotMatch(events, /violates PodSecurity/);
  });

  it("serves /metrics over HTTPS to a caller allowed to get it, and refuses one that is not", async () => {
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
    const allowed = (await rel.kubectl(["create", "token", "scraper"])).trim();
    const denied = (await rel.kubectl(["create", "token", "default"])).trim();
    const pod: Obj = (await rel.getJson("pods")).items[0];
    const url = `https://${pod.status.podIP}:8443/metrics`;
    const curl = async (token: string) => {
      const argv = [
        "curl",
        "-sk",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-H",
        `Authorization: Bearer ${token}`,
        url,
      ];
      const [command, ...args] = rel.node.inCluster(argv);
      return (await runCommand(command!, args)).stdout;
    };
    // RBAC grants reach the authorizer a moment after they are written: wait for the 200.
    await waitUntil(async () => (await curl(allowed)) === "200", {
      what: "/metrics to answer the scraper",
      timeoutMs: 60_000,
    });
    assert.equal(await curl(denied), "403");
  });

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

  it("made only calls the chart allows, and used every verb the chart grants the vault target", async () => {
    const user = `system:serviceaccount:${rel.namespace}:${PROCESS}`;
    const granted = grantedTo(rendered, PROCESS);
    const used = () => usedBy(auditLogPath(rel.node.dir), user);
    // Some calls come late (a watch is logged when its response starts): wait for every granted
    // verb, and let the assertions below say what is missing if one never comes.
    await waitUntil(async () => granted.every((g) => used().calls.has(g)), {
      what: "every granted verb to appear in the audit log",
      timeoutMs: 180_000,
    }).catch(() => undefined);
    const { calls, refused } = used();
    assert.deepEqual(refused, [], "calls the API server refused");
    const unused = granted.filter((g) => !calls.has(g));
    assert.deepEqual(unused, [], `granted but never used (used: ${[...calls].sort().join(", ")})`);
    const ungranted = [...calls].filter((c) => !granted.includes(c));
    assert.deepEqual(ungranted, [], "used but not granted (would have been refused)");
  });
});

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
  }
  return { calls, refused };
}
