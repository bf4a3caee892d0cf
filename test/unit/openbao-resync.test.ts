import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { Informer } from "../../src/runtime/informer.js";
import { createCertificateAuthority, issueServerCertificate } from "../../src/runtime/pki/x509.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { postureOf } from "../../src/targets/openbao/profile/posture.js";
import { nextWarningAt, WARNING_EVERY_MS } from "../../src/targets/openbao/profile/warnings.js";
import { nextPassMs, OBSERVE_EVERY_MS } from "../../src/targets/openbao/resync.js";
import { secretClusters } from "../../src/targets/openbao/target.js";
import { parseCertificates } from "../../src/targets/openbao/workload/certs/pem.js";
import {
  caValidityMs,
  leafValidityMs,
  nextBundle,
  planCa,
  planLeaf,
} from "../../src/targets/openbao/workload/certs/plan.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const now = Date.parse("2026-06-01T00:00:00Z");
const base = {
  settled: true,
  paused: false,
  observedThroughApi: false,
  dueAt: [],
  now,
  resyncMs: 10 * MIN,
  pollMs: 3000,
};

describe("openbao resync: when a cluster is looked at again", () => {
  it("polls a cluster that still waits, whatever is due", () => {
    assert.equal(nextPassMs({ ...base, settled: false, dueAt: [now + 10 * HOUR] }), 3000);
  });

  it("leaves a settled cluster to events until the resync backstop", () => {
    assert.equal(nextPassMs(base), 10 * MIN);
    assert.equal(nextPassMs({ ...base, settled: false, paused: true }), 10 * MIN);
  });

  it("keeps observing through OpenBao's API every minute where the pod labels leave gaps", () => {
    assert.equal(nextPassMs({ ...base, observedThroughApi: true }), OBSERVE_EVERY_MS);
    // A shorter configured resync still wins.
    assert.equal(nextPassMs({ ...base, observedThroughApi: true, resyncMs: 5000 }), 5000);
    // A paused cluster is not observed more often than its resync.
    assert.equal(nextPassMs({ ...base, paused: true, observedThroughApi: true }), 10 * MIN);
  });

  it("comes back just after the earliest future deadline, ignoring past ones", () => {
    const ms = nextPassMs({ ...base, dueAt: [now + 7 * MIN, undefined, now + 2 * MIN, now - HOUR] });
    assert.ok(ms > 2 * MIN && ms <= 2 * MIN + 1000, `${ms}`);
    assert.equal(nextPassMs({ ...base, dueAt: [now + 20 * MIN] }), 10 * MIN);
  });

  it("defaults the openbao target's resync to 10 minutes; an explicit one is kept", () => {
    assert.equal(parseOpenBaoConfig({}, "targets.openbao").resyncMs, 10 * MIN);
    assert.equal(parseOpenBaoConfig({ resyncInterval: "5s" }, "targets.openbao").resyncMs, 5000);
  });
});

describe("openbao resync: what falls due by the clock", () => {
  const rotation = 10 * HOUR;
  const t0 = new Date(now);
  const ca = createCertificateAuthority("ca", t0, caValidityMs(rotation));
  const bundle = nextBundle(ca.certPem, undefined, t0);
  const leaf = issueServerCertificate(ca, {
    commonName: "bao",
    names: ["bao.vault.svc"],
    now: t0,
    validityMs: leafValidityMs(rotation),
  });
  const stored = { ...leaf, caPem: bundle };

  it("a kept leaf is due at its rotation, and a pass then reissues it", () => {
    const kept = planLeaf(stored, ca, bundle, ["bao.vault.svc"], rotation, new Date(now + HOUR));
    assert.equal(kept.action, "keep");
    assert.ok(kept.dueAt !== undefined);
    // Within the issue slack of t0 + rotation (the certificate is backdated a little).
    assert.ok(Math.abs(kept.dueAt - (now + rotation)) <= 10 * MIN, `${kept.dueAt - now}`);
    const before = planLeaf(stored, ca, bundle, ["bao.vault.svc"], rotation, new Date(kept.dueAt - 1000));
    assert.equal(before.action, "keep");
    const after = planLeaf(stored, ca, bundle, ["bao.vault.svc"], rotation, new Date(kept.dueAt + 1000));
    assert.equal(after.action, "issue");
  });

  it("a kept CA is due three rotation periods before it expires", () => {
    const kept = planCa({ ...ca, bundlePem: bundle }, rotation, t0);
    assert.equal(kept.action, "keep");
    const after = planCa({ ...ca, bundlePem: bundle }, rotation, new Date(kept.dueAt! + 1000));
    assert.equal(after.action, "replace");
  });

  it("the next posture reminder is an hour after the earliest applicable stamp", () => {
    const posture = postureOf({ profile: "Development" });
    const stamps = {
      "openbao.org/last-development-warning": new Date(now - 10 * MIN).toISOString(),
      "openbao.org/last-static-unseal-warning": new Date(now - 30 * MIN).toISOString(),
      "openbao.org/last-profile-not-set-warning": new Date(now - 50 * MIN).toISOString(),
    };
    // profile-not-set does not apply to a Development cluster; static unseal (the default) does.
    assert.equal(nextWarningAt(posture, stamps), now - 30 * MIN + WARNING_EVERY_MS);
    assert.equal(
      nextWarningAt(postureOf({ profile: "Hardened", unseal: { type: "transit" } } as never), stamps),
      undefined,
    );
  });
});

describe("openbao resync: Secrets that wake a settled cluster", () => {
  const cluster = (name: string, tls?: Record<string, string>) =>
    ({
      apiVersion: "openbao.org/v1alpha1",
      kind: "OpenBaoCluster",
      metadata: { name, namespace: "ns" },
      spec: { ...(tls ? { tls } : {}) },
    }) as unknown as OpenBaoCluster;
  const all = [
    cluster("a"),
    cluster("b", { mode: "External", serverSecretName: "mine", caSecretName: "my-ca" }),
  ];
  const informer = { list: (ns?: string) => (ns === "ns" ? all : []) } as unknown as Informer<OpenBaoCluster>;
  const map = secretClusters(informer);
  const secret = (name: string, namespace = "ns") => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace },
  });

  it("maps a cluster's TLS, unseal key and root token Secrets to it, and nothing else", () => {
    assert.deepEqual(map(secret("a-tls-server")), ["ns/a"]);
    assert.deepEqual(map(secret("a-unseal-key")), ["ns/a"]);
    assert.deepEqual(map(secret("b-root-token")), ["ns/b"]);
    assert.deepEqual(map(secret("mine")), ["ns/b"]);
    assert.deepEqual(map(secret("my-ca")), ["ns/b"]);
    assert.deepEqual(map(secret("b-tls-server")), []);
    assert.deepEqual(map(secret("unrelated")), []);
    assert.deepEqual(map(secret("a-tls-server", "elsewhere")), []);
  });
});

describe("openbao certificates: checked once per Secret content", () => {
  it("parses the same PEM once, and still tells a key that does not match", () => {
    const t0 = new Date(now);
    const ca = createCertificateAuthority("ca", t0, caValidityMs(HOUR));
    const first = parseCertificates(ca.certPem);
    assert.ok(first && first.length === 1);
    assert.equal(parseCertificates(ca.certPem), first, "the same parsed certificates");
    const other = createCertificateAuthority("other", t0, caValidityMs(HOUR));
    const bundle = ca.certPem;
    assert.equal(planCa({ ...ca, bundlePem: bundle }, HOUR, t0).action, "keep");
    // Same certificate, another key: checked again, not taken from what was remembered.
    assert.match(
      planCa({ ...ca, keyPem: other.keyPem, bundlePem: bundle }, HOUR, t0).reason,
      /does not match/,
    );
    assert.equal(planCa({ ...ca, bundlePem: bundle }, HOUR, t0).action, "keep");
  });
});
