import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";

// biome-ignore lint/suspicious/noExplicitAny: API objects are read loosely in tests
type Json = Record<string, any>;

const cluster = (spec: Record<string, unknown>): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "demo", namespace: "ns", uid: "u-1", generation: 1 },
    spec: { version: "2.7.2", storage: { size: "1Gi" }, ...spec },
  }) as unknown as OpenBaoCluster;

const runtime = { command: ["bao"], args: ["server"], volumes: [], volumeMounts: [] };
const mountsOf = (c: OpenBaoCluster) => {
  const sts = buildStatefulSet(c, {
    component: "server",
    replicas: 1,
    configHash: "h",
    clusterDomain: "cluster.local",
    runtime,
  }) as Json;
  const spec = sts.spec.template.spec;
  const mounts = spec.containers[0].volumeMounts as Json[];
  const audit = mounts.filter((m) => String(m.name).startsWith("audit-"));
  for (const m of audit)
    assert.deepEqual(
      spec.volumes.find((v: Json) => v.name === m.name),
      { name: m.name, emptyDir: {} },
      `${m.name} is an emptyDir`,
    );
  return audit.map((m) => m.mountPath);
};
const file = (path: string, filePath: string) => ({ type: "file", path, fileOptions: { filePath } });

describe("openbao file audit devices get a writable folder", () => {
  it("mounts one emptyDir per folder a file device writes into (the sample's /openbao/audit)", () => {
    assert.deepEqual(
      mountsOf(
        cluster({ audit: [file("file", "/openbao/audit/audit.log"), file("f2", "/openbao/audit/b.log")] }),
      ),
      ["/openbao/audit"],
    );
    assert.deepEqual(
      mountsOf(
        cluster({
          audit: [
            file("a", "/var/log/bao/a.log"),
            { type: "file", path: "o", options: { file_path: "/logs/x.log" } },
          ],
        }),
      ),
      ["/logs", "/var/log/bao"],
    );
  });

  it("covers audit devices enabled by self-init requests too", () => {
    const c = cluster({
      selfInit: {
        enabled: true,
        requests: [
          {
            name: "audit",
            operation: "update",
            path: "sys/audit/f",
            auditDevice: { type: "file", fileOptions: { filePath: "/audit/f.log" } },
          },
        ],
      },
    });
    assert.deepEqual(mountsOf(c), ["/audit"]);
  });

  it("needs nothing for stdout, discard, relative paths, the data volume or other device types", () => {
    assert.deepEqual(
      mountsOf(
        cluster({
          audit: [
            file("s", "stdout"),
            file("d", "discard"),
            file("r", "relative/a.log"),
            file("v", "/openbao/data/audit.log"),
            { type: "syslog", path: "sys" },
          ],
        }),
      ),
      [],
    );
  });

  it("never mounts over the root, a parent of the pod's mounts, or a read-only mount", () => {
    assert.deepEqual(
      mountsOf(
        cluster({
          audit: [
            file("a", "/a.log"),
            file("b", "/openbao/b.log"),
            file("c", "/openbao/config/c.log"),
            file("t", "/openbao/tls/x/t.log"),
          ],
        }),
      ),
      [],
    );
  });
});

describe("openbao config paths outside the data volume get a writable folder", () => {
  const volumesOf = (c: OpenBaoCluster) => {
    const spec = (
      buildStatefulSet(c, {
        component: "server",
        replicas: 1,
        configHash: "h",
        clusterDomain: "cluster.local",
        runtime,
      }) as Json
    ).spec.template.spec;
    const mounts = spec.containers[0].volumeMounts as Json[];
    return Object.fromEntries(
      mounts
        .filter((m) => spec.volumes.find((v: Json) => v.name === m.name)?.emptyDir)
        .map((m) => [m.mountPath, m.name]),
    );
  };

  // The sample sets configuration.plugin without spec.plugins: no plugin directory (upstream 0.4.1+).
  it("mounts the log file's and the pid file's folders, no plugin directory (upstream's structured_config sample)", () => {
    const c = cluster({
      configuration: {
        logging: { file: "/var/log/openbao/openbao.log", pidFile: "/var/run/openbao/openbao.pid" },
        plugin: { autoDownload: true, downloadBehavior: "direct" },
      },
    });
    assert.deepEqual(volumesOf(c), {
      "/var/log/openbao": "files-0",
      "/var/run/openbao": "files-1",
    });
  });

  it("shares one folder between a log file and an audit device, and mounts nothing for the data volume", () => {
    const c = cluster({
      audit: [file("file", "/var/log/openbao/audit.log")],
      configuration: { logging: { file: "/var/log/openbao/openbao.log", pidFile: "/openbao/data/bao.pid" } },
    });
    assert.deepEqual(volumesOf(c), { "/var/log/openbao": "audit-0" });
  });

  it("mounts a plugin directory for declared plugins and none without any", () => {
    const plugin = {
      type: "secret",
      name: "x",
      image: "ghcr.io/o/x",
      version: "v1.0.0",
      binaryName: "x",
      sha256sum: "a".repeat(64),
    };
    assert.deepEqual(volumesOf(cluster({ plugins: [plugin] })), { "/openbao/plugins": "plugins" });
    assert.deepEqual(volumesOf(cluster({})), {});
  });
});
