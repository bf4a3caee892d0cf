import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { NAMESPACE } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { type RunningServer, startMetricsServer } from "../../src/runtime/http.js";
import { silentLogger } from "../../src/runtime/log.js";
import { MetricsAuthorizer } from "../../src/runtime/secure-metrics.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { named, render } from "../support/chart-render.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import {
  CLUSTER_ROLE,
  CLUSTER_ROLE_BINDING,
  clientWithToken,
  grantClusterWide,
  serviceAccountAllowed,
  serviceAccountToken,
} from "../support/rbac.js";

// metrics.rbac, as upstream's values files set it, against the shared API server: the ClusterRole
// and ClusterRoleBinding the chart renders are applied as rendered, and the operator's own secure
// /metrics server (TokenReview + SubjectAccessReview, as the operator runs it) then serves the
// ServiceAccounts named in metrics.rbac.subjects and refuses any other.

const FIELD_MANAGER = "chart-metrics-rbac-test";

describe("metrics.rbac on a real API server: the named scrapers may get /metrics, nobody else", () => {
  let admin: KubeClient;
  let operatorClient: KubeClient;
  let ns: string;
  let reader: string;
  let server: RunningServer;
  const tokens: Record<string, string> = {};

  before(async () => {
    admin = clientFor(sharedEnv().kubeconfigPath);
    ns = await freshNamespace(admin, "chart-mrbac");
    reader = `${ns}-po-metrics-reader`;
    // What the chart grants the operator itself when /metrics is secure (templates/rbac.yaml).
    tokens["operator"] = await serviceAccountToken(admin, ns, "operator");
    await grantClusterWide(admin, ns, "operator", `${ns}-metrics-auth`, [
      { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
      { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
    ]);
    for (const sa of ["prometheus", "vmagent", "nobody"])
      tokens[sa] = await serviceAccountToken(admin, ns, sa);
    // The release in this test's namespace, so the cluster-wide names are this test's own.
    const objs = await render([
      "--namespace",
      ns,
      "--set=metrics.rbac.enabled=true",
      `--set-json=metrics.rbac.subjects=${JSON.stringify([
        { name: "prometheus", namespace: ns },
        { name: "vmagent", namespace: ns },
      ])}`,
    ]);
    await admin.apply(CLUSTER_ROLE, named(objs, "ClusterRole", reader) as KubeObject, {
      fieldManager: FIELD_MANAGER,
    });
    await admin.apply(CLUSTER_ROLE_BINDING, named(objs, "ClusterRoleBinding", reader) as KubeObject, {
      fieldManager: FIELD_MANAGER,
    });
    operatorClient = clientWithToken(admin, tokens["operator"]!);
    server = await startMetricsServer({
      port: 0,
      host: "127.0.0.1",
      authorizer: new MetricsAuthorizer(operatorClient, { log: silentLogger() }),
    });
  });
  after(async () => {
    await server?.close();
    operatorClient?.close();
    if (admin) {
      for (const [type, name] of [
        [CLUSTER_ROLE_BINDING, reader],
        [CLUSTER_ROLE, reader],
        [CLUSTER_ROLE_BINDING, `${ns}-metrics-auth`],
        [CLUSTER_ROLE, `${ns}-metrics-auth`],
      ] as const)
        await admin.delete(type, name).catch(() => {});
      await admin.delete(NAMESPACE, ns).catch(() => {});
      admin.close();
    }
  });

  const scrape = async (who: string): Promise<number> =>
    (
      await fetch(`http://127.0.0.1:${server.port}/metrics`, {
        headers: { authorization: `Bearer ${tokens[who]}` },
      })
    ).status;
  const getMetrics = { nonResourceAttributes: { path: "/metrics", verb: "get" } };

  it("serves each subject, refuses a ServiceAccount the binding does not name, and grants nothing else", async () => {
    // The API server's authorizer learns of a new binding a moment after it is written: ask it first,
    // so the operator's first answer (cached) meets the grant.
    for (const sa of ["prometheus", "vmagent"])
      await eventually(
        () => serviceAccountAllowed(admin, ns, sa, getMetrics),
        30_000,
        `${sa} may get /metrics`,
      );
    assert.equal(await scrape("prometheus"), 200);
    assert.equal(await scrape("vmagent"), 200);
    assert.equal(await scrape("nobody"), 403);
    // Only GET /metrics: neither another verb or path, nor any resource.
    const prometheusMay = (attributes: Record<string, unknown>) =>
      serviceAccountAllowed(admin, ns, "prometheus", attributes);
    assert.equal(await prometheusMay({ nonResourceAttributes: { path: "/metrics", verb: "post" } }), false);
    assert.equal(
      await prometheusMay({ nonResourceAttributes: { path: "/debug/pprof/", verb: "get" } }),
      false,
    );
    assert.equal(
      await prometheusMay({ resourceAttributes: { namespace: ns, verb: "list", resource: "secrets" } }),
      false,
    );
  });
});
