import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ingressReadiness } from "../../src/targets/openbao/workload/network/ingress-readiness.js";

const live = (status?: unknown) => ({ metadata: { name: "bao", namespace: "vault" }, status });
const published = { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } };

describe("openbao IngressIntegrationReady (upstream 0.5's reasons)", () => {
  it("an IngressClass that does not exist is False; one the operator may not read is Unknown", () => {
    const missing = ingressReadiness({
      live: live(published),
      className: "nginx",
      classLookup: "missing",
      readinessMode: undefined,
    });
    assert.deepEqual([missing.status, missing.reason], ["False", "IngressClassMissing"]);
    assert.match(missing.message, /nginx/);
    const forbidden = ingressReadiness({
      live: live(published),
      className: "nginx",
      classLookup: "forbidden",
      readinessMode: undefined,
    });
    assert.deepEqual([forbidden.status, forbidden.reason], ["Unknown", "IngressCapabilitiesUnknown"]);
  });

  it("by default waits for the controller to publish an address; Created does not", () => {
    const pending = ingressReadiness({
      live: live({}),
      className: undefined,
      classLookup: "not-named",
      readinessMode: undefined,
    });
    assert.deepEqual([pending.status, pending.reason], ["Unknown", "IngressLoadBalancerPending"]);
    const empty = ingressReadiness({
      live: live({ loadBalancer: { ingress: [] } }),
      className: "nginx",
      classLookup: "found",
      readinessMode: "LoadBalancerPublished",
    });
    assert.equal(empty.reason, "IngressLoadBalancerPending");
    const ready = ingressReadiness({
      live: live(published),
      className: "nginx",
      classLookup: "found",
      readinessMode: undefined,
    });
    assert.deepEqual([ready.status, ready.reason], ["True", "IngressIntegrationReady"]);
    const created = ingressReadiness({
      live: live({}),
      className: undefined,
      classLookup: "not-named",
      readinessMode: "Created",
    });
    assert.deepEqual([created.status, created.reason], ["True", "IngressIntegrationReady"]);
  });

  it("an Ingress not written yet is pending", () => {
    const none = ingressReadiness({
      live: undefined,
      className: undefined,
      classLookup: "not-named",
      readinessMode: "Created",
    });
    assert.deepEqual([none.status, none.reason], ["Unknown", "IngressObjectPending"]);
  });
});
