import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { Component } from "../../src/targets/openbao/identity.js";
import { unsupportedFields } from "../../src/targets/openbao/unsupported.js";
import { ConfigError } from "../../src/targets/openbao/workload/config/errors.js";
import { renderConfig } from "../../src/targets/openbao/workload/config/index.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";
import {
  managedClaimObject,
  sharedClaims,
} from "../../src/targets/openbao/workload/statefulsets/shared-claims.js";

// spec.auditFileStorage and spec.tls.acme.sharedCache on the objects the operator builds: the pod
// volumes and mounts, the managed claim, and the rules only the renderer can check.

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

// biome-ignore lint/suspicious/noExplicitAny: tests spell out spec fields freely
const cluster = (spec: Record<string, any> = {}): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, ...spec },
  }) as unknown as OpenBaoCluster;

const runtime = { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] };
const built = (c: OpenBaoCluster, component: "server" | "read-replica" = Component.Server): Json =>
  buildStatefulSet(c, { component, replicas: 1, configHash: "h", clusterDomain: "cluster.local", runtime });
const podSpec = (s: Json) => s["spec"].template.spec;
const mountsOf = (s: Json) => podSpec(s).containers[0].volumeMounts as Json[];

const fileAudit = (filePath: string) => [{ type: "file", path: "file", fileOptions: { filePath } }];
const acme = (sharedCache?: Json) => ({
  enabled: true,
  mode: "ACME",
  acme: {
    directoryURL: "https://acme.example/dir",
    domains: ["bao.example"],
    ...(sharedCache ? { sharedCache } : {}),
  },
});

describe("spec.auditFileStorage", () => {
  const managed = cluster({
    auditFileStorage: { mode: "ManagedPVC", size: "5Gi", storageClassName: "nfs" },
    audit: fileAudit("/openbao/audit/audit.log"),
  });

  it("mounts the claim at upstream's default path, one folder per pod, on voters and read replicas", () => {
    for (const component of [Component.Server, Component.ReadReplica] as const) {
      const sts = built(managed, component);
      assert.deepEqual(
        podSpec(sts).volumes.find((v: Json) => v.name === "audit-storage"),
        { name: "audit-storage", persistentVolumeClaim: { claimName: "demo-audit" } },
      );
      assert.deepEqual(
        mountsOf(sts).find((m) => m.name === "audit-storage"),
        { name: "audit-storage", mountPath: "/openbao/audit", subPathExpr: "$(BAO_K8S_POD_NAME)" },
      );
      // The audit folder is on the claim: no emptyDir is laid over it.
      assert.equal(mountsOf(sts).filter((m) => m.mountPath === "/openbao/audit").length, 1);
      assert.ok(!podSpec(sts).volumes.some((v: Json) => v.emptyDir && /^audit-/.test(v.name)));
    }
    assert.deepEqual(unsupportedFields(managed.spec), []);
  });

  it("the managed claim: ReadWriteMany, the size and class asked for, the cluster's labels, no owner", () => {
    const claim = managedClaimObject(managed, sharedClaims(managed)[0]!) as Json;
    assert.equal(claim["metadata"].name, "demo-audit");
    assert.equal(claim["metadata"].labels["openbao.org/cluster"], "demo");
    assert.equal(claim["metadata"].labels["openbao.org/component"], "audit", "never grown as a data claim");
    assert.equal(claim["metadata"].ownerReferences, undefined);
    assert.deepEqual(claim["spec"], {
      accessModes: ["ReadWriteMany"],
      storageClassName: "nfs",
      resources: { requests: { storage: "5Gi" } },
    });
  });

  it("an existing claim is mounted as named, at the mount path given, and nothing is created", () => {
    const c = cluster({
      auditFileStorage: { mode: "ExistingPVC", existingClaimName: "team-audit", mountPath: "/var/audit/" },
      audit: fileAudit("/var/audit/bao.log"),
    });
    const sts = built(c);
    assert.deepEqual(
      podSpec(sts).volumes.find((v: Json) => v.name === "audit-storage").persistentVolumeClaim,
      { claimName: "team-audit" },
    );
    assert.equal(mountsOf(sts).find((m) => m.name === "audit-storage")?.mountPath, "/var/audit");
    assert.equal(managedClaimObject(c, sharedClaims(c)[0]!), undefined);
    assert.match(
      renderConfig(c, { clusterDomain: "cluster.local" }),
      /file_path\s*=\s*"\/var\/audit\/bao\.log"/,
    );
  });

  it("refuses a file audit device beside the claim, and a mount on /tmp or the data volume, naming the field", () => {
    const refused = (spec: Json, field: string) =>
      assert.throws(
        () => renderConfig(cluster(spec), { clusterDomain: "cluster.local" }),
        (e: unknown) => e instanceof ConfigError && e.field === field,
      );
    refused(
      { auditFileStorage: { mode: "ManagedPVC", size: "1Gi" }, audit: fileAudit("/openbao/logs/a.log") },
      "audit[0].fileOptions.filePath",
    );
    refused(
      { auditFileStorage: { mode: "ManagedPVC", size: "1Gi", mountPath: "/tmp/audit" }, audit: [] },
      "auditFileStorage.mountPath",
    );
    refused(
      { auditFileStorage: { mode: "ManagedPVC", size: "1Gi", mountPath: "/openbao/data/audit" } },
      "auditFileStorage.mountPath",
    );
    // stdout is not a file: allowed anywhere.
    renderConfig(
      cluster({ auditFileStorage: { mode: "ManagedPVC", size: "1Gi" }, audit: fileAudit("stdout") }),
      { clusterDomain: "cluster.local" },
    );
  });
});

describe("spec.tls.acme.sharedCache", () => {
  it("mounts one claim for every serving pod where config.hcl keeps the ACME cache; the config does not change", () => {
    const without = cluster({ replicas: 1, tls: acme() });
    const c = cluster({ replicas: 3, tls: acme({ mode: "ManagedPVC", size: "1Gi" }) });
    const sts = built(c);
    assert.deepEqual(
      podSpec(sts).volumes.find((v: Json) => v.name === "acme-cache"),
      { name: "acme-cache", persistentVolumeClaim: { claimName: "demo-acme-cache" } },
    );
    assert.deepEqual(
      mountsOf(sts).find((m) => m.name === "acme-cache"),
      {
        name: "acme-cache",
        mountPath: "/openbao/acme-cache",
      },
    );
    const text = renderConfig(c, { clusterDomain: "cluster.local" });
    assert.match(text, /tls_acme_cache_path\s*=\s*"\/openbao\/acme-cache"/);
    assert.equal(
      text.replace(/^#.*\n/gm, ""),
      renderConfig(cluster({ replicas: 3, tls: acme() }), { clusterDomain: "cluster.local" }).replace(
        /^#.*\n/gm,
        "",
      ),
    );
    assert.equal(
      podSpec(built(without)).volumes.find((v: Json) => v.name === "acme-cache"),
      undefined,
    );
    assert.deepEqual(unsupportedFields(c.spec), []);
    const claim = managedClaimObject(c, sharedClaims(c)[0]!) as Json;
    assert.deepEqual(claim["spec"].accessModes, ["ReadWriteMany"]);
    assert.equal(claim["metadata"].labels["openbao.org/component"], "acme-cache");
  });

  it("an existing claim is mounted as named", () => {
    const c = cluster({ replicas: 3, tls: acme({ mode: "ExistingPVC", existingClaimName: "shared-acme" }) });
    assert.deepEqual(
      podSpec(built(c)).volumes.find((v: Json) => v.name === "acme-cache").persistentVolumeClaim,
      { claimName: "shared-acme" },
    );
  });
});
