import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  acmeService,
  activeService,
  clientService,
  gatewayObjects,
  headlessServices,
  ingress,
  type NetworkCluster,
  type NetworkInputs,
  readService,
} from "../../src/targets/openbao/workload/network/plan.js";
import { apiServerEgress, networkPolicy } from "../../src/targets/openbao/workload/network/policies.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read built objects by path
type Any = any;
const cluster = (spec: NetworkCluster["spec"] = {}): NetworkCluster => ({
  metadata: { name: "bao", namespace: "vault" },
  spec,
});
const inputs = (over: Partial<NetworkInputs> = {}): NetworkInputs => ({
  apiServer: { cidrs: ["10.96.0.1/32"], ports: [443, 6443] },
  gatewayApi: {
    httpRoute: "gateway.networking.k8s.io/v1",
    tlsRoute: "gateway.networking.k8s.io/v1alpha2",
    backendTLSPolicy: "gateway.networking.k8s.io/v1",
  },
  operatorNamespace: "platform-operator-system",
  ...over,
});

describe("openbao networking: Services", () => {
  it("headless Service, under upstream's name, publishes unready pods of voters and read replicas, on both ports", () => {
    const [s, ...more]: Any[] = headlessServices(cluster());
    assert.equal(more.length, 0);
    assert.equal(s.metadata.name, "bao");
    assert.equal(s.spec.clusterIP, "None");
    assert.equal(s.spec.publishNotReadyAddresses, true);
    assert.deepEqual(s.spec.selector, { "app.kubernetes.io/instance": "bao", "openbao.org/cluster": "bao" });
    assert.deepEqual(
      s.spec.ports.map((p: Any) => [p.name, p.port]),
      [
        ["https", 8200],
        ["cluster", 8201],
      ],
    );
  });

  it("a cluster that kept its old peer Service gets it next to upstream's headless Service", () => {
    const kept = cluster();
    kept.metadata.annotations = { "openbao.org/peer-service": "bao-internal" };
    const services: Any[] = headlessServices(kept);
    assert.deepEqual(
      services.map((s) => [s.metadata.name, s.spec.clusterIP, s.spec.publishNotReadyAddresses]),
      [
        ["bao", "None", true],
        ["bao-internal", "None", true],
      ],
    );
  });

  it("client Service carries the spec's type, labels, annotations and source ranges; selects voters", () => {
    const s: Any = clientService(
      cluster({
        service: {
          type: "LoadBalancer",
          labels: { team: "x" },
          annotations: { a: "b" },
          loadBalancerSourceRanges: ["10.0.0.0/8"],
        },
      }),
    );
    assert.equal(s.metadata.name, "bao-public");
    assert.equal(s.spec.type, "LoadBalancer");
    assert.deepEqual(s.spec.loadBalancerSourceRanges, ["10.0.0.0/8"]);
    assert.equal(s.metadata.labels.team, "x");
    // The operator's own labels win over the user's.
    assert.equal(s.metadata.labels["app.kubernetes.io/managed-by"], "openbao-operator");
    assert.deepEqual(s.metadata.annotations, { a: "b" });
    assert.equal(s.spec.selector["openbao.org/component"], "server");
    assert.equal((clientService(cluster({ tls: { enabled: false } })) as Any).spec.ports[0].name, "http");
  });

  it("active Service selects the node OpenBao's service registration marks active", () => {
    const s: Any = activeService(cluster());
    assert.equal(s.metadata.name, "bao-active");
    assert.equal(s.spec.selector["openbao-active"], "true");
  });

  it("read Service exists only when enabled with replicas", () => {
    assert.equal(readService(cluster({ readReplicas: { replicas: 2 } })), undefined);
    assert.equal(
      readService(cluster({ readReplicas: { replicas: 0, service: { enabled: true } } })),
      undefined,
    );
    const s: Any = readService(
      cluster({ readReplicas: { replicas: 2, service: { enabled: true, type: "NodePort" } } }),
    );
    assert.equal(s.metadata.name, "bao-read");
    assert.equal(s.spec.type, "NodePort");
    assert.equal(s.spec.selector["openbao.org/component"], "read-replica");
  });
});

describe("openbao networking: the ACME Service (upstream's <name>-acme)", () => {
  const acme = {
    mode: "ACME",
    acme: { directoryURL: "https://acme.example/dir", domains: ["bao.example.com"] },
  };

  it("exists only with tls.mode ACME and TLS on", () => {
    assert.equal(acmeService(cluster()), undefined);
    assert.equal(acmeService(cluster({ tls: { mode: "OperatorManaged" } })), undefined);
    assert.equal(
      acmeService(cluster({ tls: { ...acme, enabled: false } } as NetworkCluster["spec"])),
      undefined,
    );
  });

  it("publishes not-ready voters on 80 and 443, both to the API port", () => {
    const s: Any = acmeService(cluster({ tls: acme } as NetworkCluster["spec"]));
    assert.equal(s.metadata.name, "bao-acme");
    assert.equal(s.spec.type, "ClusterIP");
    assert.equal(s.spec.publishNotReadyAddresses, true);
    assert.deepEqual(
      s.spec.ports.map((p: Any) => [p.name, p.port, p.targetPort]),
      [
        ["http-80", 80, 8200],
        ["https-443", 443, 8200],
      ],
    );
    assert.equal(s.spec.selector["openbao.org/component"], "server");
    assert.equal(s.metadata.labels["app.kubernetes.io/managed-by"], "openbao-operator");
  });

  it("follows the serving blue-green revision, as the client Service does", () => {
    const c = cluster({ tls: acme } as NetworkCluster["spec"]);
    c.status = { blueGreen: { phase: "Idle", blueRevision: "2-7-2-ab12c" } } as NetworkCluster["status"];
    const s: Any = acmeService(c);
    assert.equal(s.spec.selector["openbao.org/revision"], "2-7-2-ab12c");
    assert.deepEqual(s.spec.selector, (clientService(c) as Any).spec.selector);
  });
});

describe("openbao networking: Ingress and Gateway API", () => {
  it("Ingress routes the host to the client Service with the cluster's certificate by default", () => {
    assert.equal(ingress(cluster()), undefined);
    const i: Any = ingress(
      cluster({ ingress: { enabled: true, host: "bao.example.com", className: "nginx" } }),
    );
    assert.equal(i.spec.ingressClassName, "nginx");
    assert.deepEqual(i.spec.tls, [{ hosts: ["bao.example.com"], secretName: "bao-tls-server" }]);
    const path = i.spec.rules[0].http.paths[0];
    assert.deepEqual(path, {
      path: "/",
      pathType: "Prefix",
      backend: { service: { name: "bao-public", port: { number: 8200 } } },
    });
    const own: Any = ingress(cluster({ ingress: { enabled: true, host: "h", tlsSecretName: "mine" } }));
    assert.equal(own.spec.tls[0].secretName, "mine");
  });

  const gateway = {
    enabled: true,
    gatewayRef: { name: "gw", namespace: "infra" },
    hostname: "bao.example.com",
  };

  it("HTTPRoute plus a BackendTLSPolicy trusting the cluster's CA", () => {
    const { objects, missing } = gatewayObjects(
      cluster({ gateway: { ...gateway, listenerName: "https" } }),
      inputs({ backendCaPem: "CA PEM" }),
    );
    assert.deepEqual(missing, []);
    assert.deepEqual(
      objects.map((o) => `${o.kind}/${o.metadata.name}`),
      ["HTTPRoute/bao-httproute", "ConfigMap/bao-tls-ca", "BackendTLSPolicy/bao-backend-tls-policy"],
    );
    const route: Any = objects[0];
    assert.deepEqual(route.spec.parentRefs, [
      {
        group: "gateway.networking.k8s.io",
        kind: "Gateway",
        name: "gw",
        namespace: "infra",
        sectionName: "https",
      },
    ]);
    assert.deepEqual(route.spec.hostnames, ["bao.example.com"]);
    const policy: Any = objects[2];
    assert.equal(policy.spec.validation.hostname, "bao-public.vault.svc");
    assert.deepEqual(policy.spec.validation.caCertificateRefs, [
      { group: "", kind: "ConfigMap", name: "bao-tls-ca" },
    ]);
    assert.deepEqual((objects[1] as Any).data, { "ca.crt": "CA PEM" });
  });

  it("ACME (no CA bundle) trusts the system roots; backendTLS can be turned off", () => {
    const acme = gatewayObjects(cluster({ gateway }), inputs());
    assert.equal((acme.objects[1] as Any).spec.validation.wellKnownCACertificates, "System");
    const off = gatewayObjects(
      cluster({ gateway: { ...gateway, backendTLS: { enabled: false } } }),
      inputs(),
    );
    assert.deepEqual(
      off.objects.map((o) => o.kind),
      ["HTTPRoute"],
    );
  });

  it("TLS passthrough is a TLSRoute and no backend policy", () => {
    const { objects } = gatewayObjects(cluster({ gateway: { ...gateway, tlsPassthrough: true } }), inputs());
    assert.deepEqual(
      objects.map((o) => [o.kind, o.apiVersion]),
      [["TLSRoute", "gateway.networking.k8s.io/v1alpha2"]],
    );
  });

  it("names the Gateway API kinds the server lacks", () => {
    const none = inputs({ gatewayApi: {} });
    assert.deepEqual(gatewayObjects(cluster({ gateway }), none).missing, ["HTTPRoute", "BackendTLSPolicy"]);
    assert.deepEqual(
      gatewayObjects(cluster({ gateway: { ...gateway, tlsPassthrough: true } }), none).missing,
      ["TLSRoute"],
    );
  });
});

describe("openbao networking: NetworkPolicy", () => {
  it("allows peers, the namespace, the operator and the gateway in; peers, DNS and the API server out", () => {
    const p: Any = networkPolicy(
      cluster({ gateway: { enabled: true, gatewayRef: { name: "gw", namespace: "infra" }, hostname: "h" } }),
      inputs(),
    );
    assert.equal(p.metadata.name, "bao-network-policy");
    assert.deepEqual(p.spec.policyTypes, ["Ingress", "Egress"]);
    const [peers, api] = p.spec.ingress;
    assert.deepEqual(
      peers.ports.map((x: Any) => x.port),
      [8200, 8201],
    );
    assert.deepEqual(peers.from[0].podSelector.matchLabels, {
      "app.kubernetes.io/instance": "bao",
      "openbao.org/cluster": "bao",
    });
    assert.deepEqual(
      api.from.map(
        (f: Any) => f.namespaceSelector?.matchLabels["kubernetes.io/metadata.name"] ?? "same namespace",
      ),
      ["same namespace", "platform-operator-system", "infra"],
    );
    const [toPeers, dns, apiServer] = p.spec.egress;
    assert.deepEqual(
      toPeers.ports.map((x: Any) => x.port),
      [8200, 8201],
    );
    assert.equal(dns.to[0].namespaceSelector.matchLabels["kubernetes.io/metadata.name"], "kube-system");
    assert.deepEqual(
      dns.ports.map((x: Any) => `${x.protocol}/${x.port}`),
      ["UDP/53", "TCP/53"],
    );
    assert.deepEqual(apiServer.to, [{ ipBlock: { cidr: "10.96.0.1/32" } }]);
    assert.deepEqual(
      apiServer.ports.map((x: Any) => x.port),
      [443, 6443],
    );
  });

  it("appends the user's rules after the managed ones", () => {
    const extraIn = {
      from: [{ namespaceSelector: { matchLabels: { team: "monitoring" } } }],
      ports: [{ port: 8200 }],
    };
    const extraOut = { to: [{ ipBlock: { cidr: "192.0.2.0/24" } }], ports: [{ port: 443 }] };
    const p: Any = networkPolicy(
      cluster({ network: { ingressRules: [extraIn], egressRules: [extraOut], dnsNamespace: "dns" } }),
      inputs(),
    );
    assert.deepEqual(p.spec.ingress.at(-1), extraIn);
    assert.deepEqual(p.spec.egress.at(-1), extraOut);
    assert.equal(p.spec.egress[1].to[0].namespaceSelector.matchLabels["kubernetes.io/metadata.name"], "dns");
  });

  it("API-server egress: the spec's addresses win over what was observed", () => {
    const observed = { serviceIPs: ["10.96.0.1"], endpointIPs: ["192.0.2.10"], ports: [6443] };
    assert.deepEqual(apiServerEgress(cluster(), observed), {
      cidrs: ["10.96.0.1/32", "192.0.2.10/32"],
      ports: [443, 6443],
    });
    assert.deepEqual(
      apiServerEgress(
        cluster({ network: { apiServerCIDR: "10.43.0.0/16", apiServerEndpointIPs: ["fd00::1"] } }),
        observed,
      ).cidrs,
      ["10.43.0.0/16", "fd00::1/128"],
    );
    assert.deepEqual(apiServerEgress(cluster(), { serviceIPs: [], endpointIPs: [], ports: [] }).cidrs, []);
  });
});
