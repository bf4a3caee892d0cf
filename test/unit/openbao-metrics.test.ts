import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { checkClusterSpec } from "../../src/targets/openbao/validate/cluster.js";
import { ConfigError, renderConfig } from "../../src/targets/openbao/workload/config/index.js";
import { metricsSettings } from "../../src/targets/openbao/workload/config/metrics.js";
import { metricsService, serviceMonitor } from "../../src/targets/openbao/workload/network/metrics.js";
import type { NetworkCluster } from "../../src/targets/openbao/workload/network/plan.js";
import { networkPolicy } from "../../src/targets/openbao/workload/network/policies.js";
import { type Entry, find, parseHcl, plain } from "../fixtures/openbao/golden/hcl-reader.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read built objects by path
type Any = any;
const ref = { name: "bao", namespace: "vault" };
const on = (metrics: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  version: "2.7.2",
  observability: { metrics: { enabled: true, ...metrics } },
  ...extra,
});
// biome-ignore lint/suspicious/noExplicitAny: specs spelled out freely
const cluster = (spec: Record<string, any>): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "bao", namespace: "vault" },
    spec: { storage: { size: "1Gi" }, ...spec },
  }) as unknown as OpenBaoCluster;
const listeners = (doc: Entry[]) => find(doc, "listener").map((e) => plain(e.value) as Any);

describe("openbao observability.metrics: what is asked", () => {
  it("off unless enabled; Active by default, on the API listener, with a ServiceMonitor", () => {
    assert.equal(metricsSettings({ version: "2.7.2" }), undefined);
    assert.equal(metricsSettings(on({ enabled: false })), undefined);
    assert.deepEqual(metricsSettings(on({})), { profile: "Active", serviceMonitor: { enabled: true } });
  });

  it("AllNodes brings a metrics-only listener on 8202, without a token unless told otherwise", () => {
    assert.deepEqual(metricsSettings(on({ scrapeProfile: "AllNodes" }))?.listener, {
      port: 8202,
      unauthenticated: true,
    });
    const closed = metricsSettings(
      on({
        scrapeProfile: "AllNodes",
        metricsOnlyListener: { port: 9102, unauthenticatedMetricsAccess: false },
      }),
    );
    assert.deepEqual(closed?.listener, { port: 9102, unauthenticated: false });
    // Active with a listener asked for: a token is still needed there.
    assert.deepEqual(metricsSettings(on({ metricsOnlyListener: { enabled: true } }))?.listener, {
      port: 8202,
      unauthenticated: false,
    });
    assert.equal(metricsSettings(on({ serviceMonitor: { enabled: false } }))?.serviceMonitor, undefined);
  });

  it("refuses the listener with ACME and before OpenBao 2.5.0, naming the field", () => {
    for (const spec of [
      on({ scrapeProfile: "AllNodes" }, { tls: { mode: "ACME" } }),
      on({ scrapeProfile: "AllNodes" }, { version: "2.4.1" }),
    ])
      assert.throws(
        () => metricsSettings(spec as Any),
        (e: unknown) => e instanceof ConfigError && e.field === "observability.metrics.metricsOnlyListener",
      );
    const problems = checkClusterSpec(
      "bao",
      on({ scrapeProfile: "AllNodes" }, { version: "2.4.1", storage: { size: "1Gi" } }),
    );
    assert.deepEqual(
      problems.map((p) => p.field),
      ["spec.observability.metrics.metricsOnlyListener"],
    );
    assert.match(problems[0]!.message, /2\.5\.0/);
  });
});

describe("openbao observability.metrics: config.hcl", () => {
  it("Active: telemetry for Prometheus, one listener serving metrics with a token", () => {
    const doc = parseHcl(renderConfig(cluster(on({}))));
    assert.equal(listeners(doc).length, 1);
    assert.equal(listeners(doc)[0].telemetry, undefined);
    assert.deepEqual(plain(find(doc, "telemetry")[0]!.value), {
      disable_hostname: true,
      prometheus_retention_time: "30s",
    });
  });

  it("AllNodes: the API listener stops serving metrics; a second one serves only them, with the same certificate", () => {
    const doc = parseHcl(renderConfig(cluster(on({ scrapeProfile: "AllNodes" }))));
    const [api, metrics] = listeners(doc);
    assert.deepEqual(api.telemetry, { disallow_metrics: true });
    assert.equal(metrics.address, "0.0.0.0:8202");
    assert.deepEqual(metrics.telemetry, { metrics_only: true, unauthenticated_metrics_access: true });
    assert.equal(metrics.tls_cert_file, api.tls_cert_file);
    assert.equal(metrics.cluster_address, undefined, "no Raft on the metrics port");
  });

  it("keeps the user's telemetry, laying only upstream's Prometheus settings over it", () => {
    const doc = parseHcl(
      renderConfig(cluster(on({}, { telemetry: { prometheusRetentionTime: "2m", usageGaugePeriod: "5m" } }))),
    );
    assert.deepEqual(plain(find(doc, "telemetry")[0]!.value), {
      prometheus_retention_time: "2m",
      usage_gauge_period: "5m",
      disable_hostname: true,
    });
    // Without observability, spec.telemetry alone, as before.
    const plainDoc = parseHcl(
      renderConfig(cluster({ version: "2.7.2", telemetry: { prometheusRetentionTime: "2m" } })),
    );
    assert.deepEqual(plain(find(plainDoc, "telemetry")[0]!.value), { prometheus_retention_time: "2m" });
  });
});

describe("openbao observability.metrics: Service and ServiceMonitor", () => {
  it("Active: a ClusterIP Service on the active voter's API port, under upstream's name and labels", () => {
    const s: Any = metricsService(ref, metricsSettings(on({}))!);
    assert.equal(s.metadata.name, "bao-metrics");
    assert.equal(s.metadata.labels["openbao.org/scrape-profile"], "Active");
    assert.equal(s.metadata.labels["app.kubernetes.io/component"], "metrics");
    assert.equal(s.spec.selector["openbao-active"], "true");
    assert.equal(s.spec.clusterIP, undefined);
    assert.deepEqual(s.spec.ports, [
      { name: "https-metrics", port: 8200, targetPort: "api", protocol: "TCP" },
    ]);
  });

  it("AllNodes: headless over every pod, not-ready ones too, on the metrics port", () => {
    const s: Any = metricsService(ref, metricsSettings(on({ scrapeProfile: "AllNodes" }))!);
    assert.equal(s.spec.clusterIP, "None");
    assert.equal(s.spec.publishNotReadyAddresses, true);
    assert.equal(s.spec.selector["openbao-active"], undefined);
    assert.equal(s.spec.selector["openbao.org/component"], undefined, "read replicas too");
    assert.deepEqual(s.spec.ports, [
      { name: "https-metrics", port: 8202, targetPort: "metrics", protocol: "TCP" },
    ]);
  });

  it("the ServiceMonitor selects that Service and carries the user's auth, TLS and labels (theirs never over ours)", () => {
    const m = metricsSettings(
      on({
        serviceMonitor: {
          enabled: true,
          interval: "15s",
          labels: { release: "kube-prometheus-stack", "openbao.org/scrape-profile": "mine" },
          authorization: { credentialsSecret: { name: "metrics-token" } },
          tlsConfig: { serverName: "bao-active.vault.svc", caConfigMap: { name: "bao-ca" } },
        },
      }),
    )!;
    const sm: Any = serviceMonitor(ref, m, true);
    const svc: Any = metricsService(ref, m);
    assert.equal(sm.metadata.labels.release, "kube-prometheus-stack");
    assert.equal(sm.metadata.labels["openbao.org/scrape-profile"], "Active");
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels))
      assert.equal(svc.metadata.labels[k], v);
    assert.deepEqual(sm.spec.namespaceSelector, { matchNames: ["vault"] });
    assert.equal(sm.spec.jobLabel, "app.kubernetes.io/name");
    const [ep] = sm.spec.endpoints;
    assert.equal(ep.port, svc.spec.ports[0].name);
    assert.equal(ep.path, "/v1/sys/metrics");
    assert.deepEqual(ep.params, { format: ["prometheus"] });
    assert.equal(ep.scheme, "https");
    assert.equal(ep.interval, "15s");
    assert.deepEqual(ep.authorization, {
      type: "Bearer",
      credentials: { name: "metrics-token", key: "token" },
    });
    assert.deepEqual(ep.tlsConfig, {
      serverName: "bao-active.vault.svc",
      ca: { configMap: { name: "bao-ca", key: "ca.crt" } },
    });
    assert.equal(ep.relabelings, undefined);
    const all: Any = serviceMonitor(ref, metricsSettings(on({ scrapeProfile: "AllNodes" }))!, false);
    assert.equal(all.spec.endpoints[0].scheme, "http");
    assert.deepEqual(
      all.spec.endpoints[0].relabelings.map((r: Any) => r.targetLabel),
      ["pod", "node"],
    );
  });
});

describe("openbao network: trusted peers and DNS endpoints", () => {
  const inputs = { apiServer: { cidrs: ["10.96.0.1/32"], ports: [443] }, gatewayApi: {} };
  const np = (spec: NetworkCluster["spec"]): Any =>
    networkPolicy({ metadata: { name: "bao", namespace: "vault" }, spec }, inputs);

  it("each trusted ingress peer reaches the API port, and the metrics-only port when there is one", () => {
    const peer = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } };
    const plainRules = np({ network: { trustedIngressPeers: [peer] } }).spec.ingress;
    const trusted = plainRules.filter((r: Any) => JSON.stringify(r.from) === JSON.stringify([peer]));
    assert.deepEqual(trusted, [{ from: [peer], ports: [{ protocol: "TCP", port: 8200 }] }]);
    const withMetrics = np({
      network: { trustedIngressPeers: [peer] },
      ...(on({ scrapeProfile: "AllNodes" }) as Any),
    }).spec.ingress.filter((r: Any) => JSON.stringify(r.from) === JSON.stringify([peer]));
    assert.deepEqual(withMetrics[0].ports, [
      { protocol: "TCP", port: 8200 },
      { protocol: "TCP", port: 8202 },
    ]);
  });

  it("DNS endpoint addresses get their own egress rule on port 53; a bad one is refused by name", () => {
    const egress = np({ network: { dnsEndpointIPs: ["10.244.0.10", "fd00::a"] } }).spec.egress;
    const rule = egress.find((r: Any) => r.to?.[0]?.ipBlock?.cidr === "10.244.0.10/32");
    assert.deepEqual(rule.to, [
      { ipBlock: { cidr: "10.244.0.10/32" } },
      { ipBlock: { cidr: "fd00::a/128" } },
    ]);
    assert.deepEqual(
      rule.ports.map((p: Any) => `${p.protocol}/${p.port}`),
      ["UDP/53", "TCP/53"],
    );
    const problems = checkClusterSpec("bao", {
      version: "2.7.2",
      storage: { size: "1Gi" },
      network: { dnsEndpointIPs: ["10.0.0.1", "kube-dns"] },
    });
    assert.deepEqual(
      problems.map((p) => `${p.field}: ${p.message}`),
      ['spec.network.dnsEndpointIPs[1]: "kube-dns" is not an IP address'],
    );
  });
});
