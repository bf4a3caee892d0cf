import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import {
  INSTALL_MANIFEST_FILE,
  INSTALL_NAMESPACE,
  renderInstallManifest,
} from "../../src/cli/install-manifest.js";
import type { KubeClient } from "../../src/runtime/client.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { type ControlPlane, startControlPlane } from "../../src/testenv/controlplane.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { type Obj, parseStrict } from "../support/chart-render.js";
import { clientFor, eventually } from "../support/kube.js";
import { CLUSTER_ROLE, ROLE_BINDING } from "../support/rbac.js";

// deploy/install.yaml, the chart for people without Helm: it is what `npm run manifests` writes
// today, a real API server accepts every document (server-side apply, dry run, then for real), and
// once applied its aggregated ClusterRoles give Kubernetes' view, edit and admin what they should on
// the operator's kinds: the API server's own RBAC answers, after kube-controller-manager's
// clusterrole-aggregation controller joined them. Its own control plane: the Namespace and CRDs the
// file creates are cluster-wide, and the shared one runs no controller-manager.

const FIELD_MANAGER = "install-manifest-test";
const SENSITIVE = [
  "restore",
  "maintenance",
  "usecloudidentities",
  "usecustomexecutables",
  "usehelperimages",
  "useimagetrustroots",
];

describe("deploy/install.yaml", () => {
  let cp: ControlPlane;
  let client: KubeClient;
  let docs: Obj[];

  before(async () => {
    docs = parseStrict(readFileSync(INSTALL_MANIFEST_FILE, "utf8"), "deploy/install.yaml");
    cp = await startControlPlane();
    await cp.startControllerManager(["clusterrole-aggregation"]);
    client = clientFor(cp.kubeconfigPath);
  });
  after(async () => {
    client?.close();
    await cp?.stop();
  });

  it("is what `npm run manifests` renders from the chart today (run it after changing the chart)", async () => {
    const current = await renderInstallManifest(await ensureHelm());
    assert.equal(readFileSync(INSTALL_MANIFEST_FILE, "utf8"), current, "deploy/install.yaml is stale");
    // Nothing in it is a private key: the /metrics certificate is made by the operator at start.
    assert.doesNotMatch(current, /tls\.key:|PRIVATE KEY/);
    assert.equal(docs[0]!.kind, "Namespace");
    assert.equal(docs[0]!.metadata.labels["pod-security.kubernetes.io/enforce"], "restricted");
    const kinds = new Set(docs.map((d) => d.kind));
    for (const kind of [
      "CustomResourceDefinition",
      "Deployment",
      "ServiceAccount",
      "ClusterRole",
      "ConfigMap",
    ])
      assert.ok(kinds.has(kind), `it holds a ${kind}`);
  });

  it("applies cleanly on a real API server: server-side dry run of every document, then for real", async () => {
    const apply = async (doc: Obj, dryRun: boolean) => {
      const type = await client.resources.mapping(doc.apiVersion, doc.kind);
      return client.apply(type, doc as KubeObject, { fieldManager: FIELD_MANAGER, force: true, dryRun });
    };
    // The file's own order: Namespace and CRDs first, as kubectl applies it.
    const [namespace, ...rest] = docs;
    await apply(namespace!, true);
    await apply(namespace!, false);
    const crds = rest.filter((d) => d.kind === "CustomResourceDefinition");
    for (const crd of crds) await apply(crd, true);
    for (const crd of crds) await apply(crd, false);
    const others = rest.filter((d) => d.kind !== "CustomResourceDefinition");
    for (const doc of others) await apply(doc, true);
    for (const doc of others) await apply(doc, false);
    const deployment = others.find((d) => d.kind === "Deployment")!;
    const live = await client.get(
      await client.resources.mapping("apps/v1", "Deployment"),
      deployment.metadata.name,
      INSTALL_NAMESPACE,
    );
    assert.equal(live.metadata.name, deployment.metadata.name);
  });

  it("aggregates: view reads the operator's kinds, edit writes them, admin alone holds the sensitive verbs", async () => {
    // Bindings of Kubernetes' own roles in one namespace, as a platform hands them out.
    const ns = "apps";
    await client.apply(
      await client.resources.mapping("v1", "Namespace"),
      { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
      { fieldManager: FIELD_MANAGER },
    );
    for (const [user, role] of [
      ["carol", "view"],
      ["alice", "edit"],
      ["bob", "admin"],
    ] as const)
      await client.create(ROLE_BINDING, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: user, namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
      } as KubeObject);
    const may = async (user: string, verb: string, group: string, resource: string): Promise<boolean> => {
      const review = await client.request<{ status: { allowed: boolean } }>({
        method: "POST",
        path: "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: { user, resourceAttributes: { namespace: ns, verb, group, resource } },
        },
      });
      return review.status.allowed;
    };
    // The aggregation controller fills admin, edit and view from the labels: wait until admin has it.
    await eventually(
      async () => {
        const admin = await client.get<KubeObject & { rules?: { verbs: string[] }[] }>(CLUSTER_ROLE, "admin");
        return (admin.rules ?? []).some((r) => r.verbs.includes("usehelperimages")) || undefined;
      },
      60_000,
      "the admin ClusterRole to aggregate the sensitive verbs",
    );
    const kinds: [string, string][] = [
      ["openbao.org", "openbaoclusters"],
      ["openbao.org", "openbaorestores"],
      ["openbao.org", "openbaotenants"],
      ["apps.gitlab.com", "gitlabcores"],
      ["ohmlab.fr", "vaultseeds"],
    ];
    await eventually(
      async () => (await may("alice", "create", "ohmlab.fr", "vaultseeds")) || undefined,
      60_000,
      "edit to aggregate the editor roles",
    );
    await eventually(
      async () => (await may("carol", "list", "ohmlab.fr", "vaultseeds")) || undefined,
      60_000,
      "view to aggregate the viewer roles",
    );
    for (const [group, resource] of kinds) {
      for (const verb of ["get", "list", "watch"])
        for (const user of ["carol", "alice", "bob"])
          assert.equal(await may(user, verb, group, resource), true, `${user} ${verb} ${resource}`);
      assert.equal(
        await may("carol", "get", group, `${resource}/status`),
        true,
        `carol reads ${resource}/status`,
      );
      for (const verb of ["create", "update", "patch", "delete"]) {
        assert.equal(await may("carol", verb, group, resource), false, `view may not ${verb} ${resource}`);
        for (const user of ["alice", "bob"])
          assert.equal(await may(user, verb, group, resource), true, `${user} ${verb} ${resource}`);
      }
      // Nobody but the operator writes status.
      for (const user of ["alice", "bob"])
        assert.equal(
          await may(user, "patch", group, `${resource}/status`),
          false,
          `${user} patches ${resource}/status`,
        );
    }
    for (const verb of SENSITIVE) {
      assert.equal(await may("bob", verb, "openbao.org", "openbaoclusters"), true, `admin: ${verb}`);
      assert.equal(await may("alice", verb, "openbao.org", "openbaoclusters"), false, `edit: ${verb}`);
      assert.equal(await may("carol", verb, "openbao.org", "openbaoclusters"), false, `view: ${verb}`);
    }
  });
});
