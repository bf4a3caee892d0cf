import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  clusterPodNames,
  type IdentityCluster,
  serviceAccount,
  serviceRegistrationBinding,
  serviceRegistrationRole,
} from "../../src/targets/openbao/workload/identity/plan.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read built objects by path
type Any = any;
const cluster = (spec: IdentityCluster["spec"] = {}): IdentityCluster => ({
  metadata: { name: "bao", namespace: "vault" },
  spec,
});

describe("openbao identity: ServiceAccount and service-registration RBAC", () => {
  it("names the ServiceAccount after the cluster unless the spec names one", () => {
    assert.equal(serviceAccount(cluster()).metadata.name, "bao-serviceaccount");
    const own: Any = serviceAccount(
      cluster({ serviceAccount: { name: "vault-sa", annotations: { a: "b" } } }),
    );
    assert.equal(own.metadata.name, "vault-sa");
    assert.deepEqual(own.metadata.annotations, { a: "b" });
    assert.equal(own.metadata.labels["openbao.org/cluster"], "bao");
  });

  it("lets the pods get, update and patch only the cluster's own pods", () => {
    const role: Any = serviceRegistrationRole(cluster({ replicas: 3, readReplicas: { replicas: 2 } }), [
      "bao-green-0",
    ]);
    assert.deepEqual(role.rules, [
      {
        apiGroups: [""],
        resources: ["pods"],
        resourceNames: ["bao-0", "bao-1", "bao-2", "bao-read-0", "bao-read-1", "bao-green-0"],
        verbs: ["get", "update", "patch"],
      },
    ]);
    assert.deepEqual(clusterPodNames(cluster()), ["bao-0", "bao-1", "bao-2"]);
  });

  it("binds the Role to the ServiceAccount the pods run as, both named after it as upstream does", () => {
    const b: Any = serviceRegistrationBinding(cluster({ serviceAccount: { name: "vault-sa" } }));
    assert.equal(b.metadata.name, "vault-sa-rolebinding");
    assert.deepEqual(b.roleRef, {
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: "vault-sa-role",
    });
    assert.equal(serviceRegistrationRole(cluster()).metadata.name, "bao-serviceaccount-role");
    assert.deepEqual(b.subjects, [{ kind: "ServiceAccount", name: "vault-sa", namespace: "vault" }]);
  });
});
