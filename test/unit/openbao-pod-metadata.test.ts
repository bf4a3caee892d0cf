import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { openBaoVerdict } from "../../src/targets/openbao/admission.js";
import {
  ANNOTATION_CONFIG_HASH,
  Component,
  type ComponentName,
  LABEL_CLUSTER,
  LABEL_COMPONENT,
  LABEL_OPENBAO_ACTIVE,
  LABEL_REVISION,
} from "../../src/targets/openbao/identity.js";
import { unsupportedFields } from "../../src/targets/openbao/unsupported.js";
import { renderConfig } from "../../src/targets/openbao/workload/config/index.js";
import { asRevisionSet } from "../../src/targets/openbao/workload/statefulsets/bluegreen.js";
import { buildStatefulSet } from "../../src/targets/openbao/workload/statefulsets/build.js";
import { ignoredPodMetadata } from "../../src/targets/openbao/workload/statefulsets/pod-metadata.js";
import { SCHEDULING } from "../fixtures/openbao/scheduling.js";

// The three upstream 0.5 fields this file covers, each on the objects the operator builds:
// spec.podMetadata (and the read-replica template's metadata), spec.resources apart from the read
// replicas', and plugin_directory only with spec.plugins.

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
const built = (c: OpenBaoCluster, component: ComponentName = Component.Server): Json =>
  buildStatefulSet(c, { component, replicas: 1, configHash: "h1", clusterDomain: "cluster.local", runtime });

const META = {
  labels: { "team.example.com/owner": "payments", [LABEL_CLUSTER]: "other", [LABEL_OPENBAO_ACTIVE]: "true" },
  annotations: { "example.com/scrape": "yes", [ANNOTATION_CONFIG_HASH]: "mine" },
};

describe("spec.podMetadata on the OpenBao pods", () => {
  it("adds the user's labels and annotations to voter and read-replica pods; the operator's keys win", () => {
    for (const component of [Component.Server, Component.ReadReplica]) {
      const sts = built(cluster({ podMetadata: META, readReplicas: { replicas: 1 } }), component);
      const meta = sts.spec.template.metadata;
      assert.equal(meta.labels["team.example.com/owner"], "payments", component);
      assert.equal(meta.annotations["example.com/scrape"], "yes", component);
      // Selection and rollout keep working: the selector still matches, the hash is the operator's.
      assert.equal(meta.labels[LABEL_CLUSTER], "demo", component);
      assert.equal(meta.labels[LABEL_COMPONENT], component);
      for (const [k, v] of Object.entries(sts.spec.selector.matchLabels)) assert.equal(meta.labels[k], v, k);
      assert.equal(meta.annotations[ANNOTATION_CONFIG_HASH], "h1", component);
      // OpenBao's own state label is left for OpenBao to write, never preset from the template.
      assert.equal(meta.labels[LABEL_OPENBAO_ACTIVE], undefined, component);
      // The StatefulSet and its claims keep the operator's labels only.
      assert.equal(sts.metadata.labels["team.example.com/owner"], undefined);
    }
  });

  it("read replicas take the template's metadata over podMetadata; voters never see it", () => {
    const c = cluster({
      podMetadata: { labels: { tier: "base", shared: "base" }, annotations: { a: "base" } },
      readReplicas: {
        replicas: 1,
        template: { metadata: { labels: { shared: "read", only: "read" }, annotations: { a: "read" } } },
      },
    });
    const voter = built(c).spec.template.metadata;
    const replica = built(c, Component.ReadReplica).spec.template.metadata;
    assert.deepEqual(
      [voter.labels.tier, voter.labels.shared, voter.labels.only],
      ["base", "base", undefined],
    );
    assert.equal(voter.annotations.a, "base");
    assert.deepEqual(
      [replica.labels.tier, replica.labels.shared, replica.labels.only],
      ["base", "read", "read"],
    );
    assert.equal(replica.annotations.a, "read");
  });

  it("blue-green revision sets keep the user's keys and their own revision label, not the user's", () => {
    const c = cluster({ podMetadata: { labels: { team: "a", [LABEL_REVISION]: "spoof" } } });
    const set = asRevisionSet(c, built(c), "r2", 3) as Json;
    assert.equal(set.spec.template.metadata.labels.team, "a");
    assert.equal(set.spec.template.metadata.labels[LABEL_REVISION], "r2");
  });

  it("without podMetadata the pod template is what it was (no rollout for existing clusters)", () => {
    const meta = built(cluster()).spec.template.metadata;
    assert.deepEqual(Object.keys(meta.annotations), [ANNOTATION_CONFIG_HASH]);
    assert.deepEqual(meta.labels, built(cluster()).metadata.labels);
  });

  it("each ignored key is named with its field and the reason, at admission too", () => {
    const spec = {
      version: "2.7.2",
      storage: { size: "1Gi" },
      podMetadata: META,
      readReplicas: { replicas: 1, template: { metadata: { labels: { [LABEL_COMPONENT]: "x", ok: "1" } } } },
    };
    const ignored = ignoredPodMetadata(spec);
    assert.deepEqual(
      ignored.map((s) => s.split(":")[0]),
      [
        `spec.podMetadata.labels["${LABEL_CLUSTER}"]`,
        `spec.podMetadata.labels["${LABEL_OPENBAO_ACTIVE}"]`,
        `spec.podMetadata.annotations["${ANNOTATION_CONFIG_HASH}"]`,
        `spec.readReplicas.template.metadata.labels["${LABEL_COMPONENT}"]`,
      ],
    );
    assert.ok(ignored.every((s) => /ignored; the operator/.test(s)));
    assert.deepEqual(ignoredPodMetadata({ podMetadata: { labels: { ok: "1" } } }), []);
    assert.deepEqual(ignoredPodMetadata("not a spec"), []);

    const verdict = openBaoVerdict({
      uid: "1",
      operation: "CREATE",
      kind: { group: "openbao.org", version: "v1alpha1", kind: "OpenBaoCluster" },
      name: "demo",
      namespace: "ns",
      object: {
        apiVersion: "openbao.org/v1alpha1",
        kind: "OpenBaoCluster",
        metadata: { name: "demo" },
        spec,
      },
    });
    // Ignored, not refused: the manifest applies as upstream's does.
    assert.deepEqual(verdict.errors, []);
    for (const w of ignored) assert.ok(verdict.warnings.includes(w), w);
  });
});

describe("spec.resources is the voters'; read replicas size themselves", () => {
  const voters = { requests: { cpu: "500m", memory: "256Mi" }, limits: { memory: "512Mi" } };
  const ours = { requests: { cpu: "100m" } };
  const upstream = { requests: { cpu: "250m" }, limits: { cpu: "1" } };
  const resourcesOf = (sts: Json) => sts.spec.template.spec.containers[0].resources;

  it("voters take spec.resources and nothing of the read replicas'", () => {
    const c = cluster({
      resources: voters,
      readReplicas: { replicas: 1, resources: ours, template: { resources: upstream } },
    });
    assert.deepEqual(resourcesOf(built(c)), voters);
  });

  it("read replicas take template.resources, then readReplicas.resources, never spec.resources", () => {
    const replica = (rr: Json) =>
      resourcesOf(
        built(cluster({ resources: voters, readReplicas: { replicas: 1, ...rr } }), Component.ReadReplica),
      );
    assert.deepEqual(replica({ resources: ours, template: { resources: upstream } }), upstream);
    assert.deepEqual(replica({ resources: ours }), ours);
    assert.deepEqual(replica({ template: { resources: upstream } }), upstream);
    assert.equal(replica({}), undefined);
  });
});

describe("plugin_directory only with spec.plugins", () => {
  const plugin = {
    type: "secret",
    name: "aws",
    image: "ghcr.io/openbao/openbao-plugin-secrets-aws",
    version: "v1.0.0",
    binaryName: "openbao-plugin-secrets-aws",
    sha256sum: "a".repeat(64),
  };
  const mountsOf = (c: OpenBaoCluster): string[] =>
    built(c).spec.template.spec.containers[0].volumeMounts.map((m: Json) => m.mountPath);

  it("is rendered, with its writable folder, when a plugin is declared", () => {
    const c = cluster({ plugins: [plugin], configuration: { plugin: { autoDownload: true } } });
    assert.match(renderConfig(c), /^plugin_directory\s*=\s*"\/openbao\/plugins"$/m);
    assert.ok(mountsOf(c).includes("/openbao/plugins"));
  });

  it("is left out when only configuration.plugin is set, or plugins is empty", () => {
    for (const spec of [{ configuration: { plugin: { autoDownload: true } } }, { plugins: [] }, {}]) {
      const c = cluster(spec);
      const text = renderConfig(c);
      assert.doesNotMatch(text, /plugin_directory/, JSON.stringify(spec));
      assert.ok(!mountsOf(c).includes("/openbao/plugins"), JSON.stringify(spec));
    }
    // The download settings themselves are still rendered.
    assert.match(
      renderConfig(cluster({ configuration: { plugin: { autoDownload: true } } })),
      /plugin_auto_download\s*=\s*true/,
    );
  });
});

describe("UnsupportedFields no longer names what is acted on", () => {
  it("podMetadata, resources and the read-replica template's metadata and resources are acted on", () => {
    assert.deepEqual(
      unsupportedFields({
        podMetadata: META,
        resources: { requests: { cpu: "1" } },
        plugins: [],
        readReplicas: { replicas: 1, template: { metadata: META, resources: { requests: { cpu: "1" } } } },
      }),
      [],
    );
  });

  it("the template's scheduling is acted on too", () => {
    assert.deepEqual(
      unsupportedFields({ readReplicas: { template: { scheduling: { nodeSelector: { zone: "a" } } } } }),
      [],
    );
  });
});

describe("readReplicas.template.scheduling places the read-replica pods", () => {
  it("each of the four fields goes into the read-replica pod spec as given; voters get none of it", () => {
    const c = cluster({ readReplicas: { replicas: 2, template: { scheduling: SCHEDULING } } });
    const replica = built(c, Component.ReadReplica).spec.template.spec;
    for (const [k, v] of Object.entries(SCHEDULING)) assert.deepEqual(replica[k], v, k);
    const voter = built(c).spec.template.spec;
    for (const k of Object.keys(SCHEDULING)) assert.equal(voter[k], undefined, k);
  });

  it("empty or absent fields add nothing, so existing read replicas do not roll", () => {
    const before = built(cluster({ readReplicas: { replicas: 1 } }), Component.ReadReplica);
    const empty = built(
      cluster({
        readReplicas: {
          replicas: 1,
          template: { scheduling: { nodeSelector: {}, tolerations: [], topologySpreadConstraints: [] } },
        },
      }),
      Component.ReadReplica,
    );
    assert.deepEqual(empty, before);
  });
});
