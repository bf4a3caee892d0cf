import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { openBaoVerdict } from "../../src/targets/openbao/admission.js";
import { checkClusterSpec } from "../../src/targets/openbao/validate/cluster.js";
import {
  keyExchangeSupported,
  listenerTlsPolicy,
} from "../../src/targets/openbao/workload/config/listener-tls.js";
import type { SpecView } from "../../src/targets/openbao/workload/config/spec-view.js";

const HYBRID = ["X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024"];

function spec(listener: Record<string, unknown>, extra: Record<string, unknown> = {}): SpecView {
  return {
    version: "2.7.2",
    tls: { enabled: true, mode: "OperatorManaged" },
    configuration: { listener },
    ...extra,
  } as SpecView;
}

function refusal(s: SpecView, running?: string): { field: string; problem: string } {
  try {
    listenerTlsPolicy(s, running);
  } catch (e) {
    const err = e as { field: string; problem: string };
    return { field: err.field, problem: err.problem };
  }
  assert.fail("expected a refusal");
}

describe("listener TLS policy (configuration.listener tlsMinVersion / tlsMaxVersion / tlsKeyExchangePreferences)", () => {
  it("renders nothing when no policy field is set, and OpenBao's names when one is", () => {
    assert.deepEqual(listenerTlsPolicy(spec({ proxyProtocolBehavior: "use_always" })), {});
    assert.deepEqual(
      listenerTlsPolicy(
        spec({ tlsMinVersion: "tls13", tlsMaxVersion: "tls13", tlsKeyExchangePreferences: HYBRID }),
      ),
      { tls_min_version: "tls13", tls_max_version: "tls13", tls_key_exchange_preferences: HYBRID },
    );
    // A classical group permits TLS 1.2 clients to fall back to it.
    assert.deepEqual(listenerTlsPolicy(spec({ tlsKeyExchangePreferences: ["X25519MLKEM768", "X25519"] })), {
      tls_min_version: undefined,
      tls_max_version: undefined,
      tls_key_exchange_preferences: ["X25519MLKEM768", "X25519"],
    });
  });

  it("refuses what OpenBao would refuse or what would lock every client out, naming the field", () => {
    const cases: [SpecView, string, RegExp, string?][] = [
      [spec({ tlsMinVersion: "tls13" }, { tls: { enabled: false } }), "configuration.listener", /needs TLS/],
      [spec({ tlsMinVersion: "tls13", tlsDisable: true }), "configuration.listener", /needs TLS/],
      [spec({ tlsMinVersion: "tls11" }), "configuration.listener.tlsMinVersion", /not one of tls12, tls13/],
      [
        spec({ tlsMinVersion: "tls13", tlsMaxVersion: "tls12" }),
        "configuration.listener.tlsMaxVersion",
        /greater/,
      ],
      [spec({ tlsKeyExchangePreferences: [] }), "configuration.listener.tlsKeyExchangePreferences", /1 to 7/],
      [
        spec({ tlsMinVersion: "tls13", tlsKeyExchangePreferences: ["MLKEM1024"] }),
        "configuration.listener.tlsKeyExchangePreferences[0]",
        /not one of/,
      ],
      [
        spec({ tlsMinVersion: "tls13", tlsKeyExchangePreferences: ["X25519MLKEM768", "X25519MLKEM768"] }),
        "configuration.listener.tlsKeyExchangePreferences[1]",
        /twice/,
      ],
      [spec({ tlsKeyExchangePreferences: HYBRID }), "configuration.listener.tlsMinVersion", /must be tls13/],
      [
        spec({ tlsMinVersion: "tls12", tlsKeyExchangePreferences: HYBRID }),
        "configuration.listener.tlsMinVersion",
        /must be tls13/,
      ],
      [
        spec({ tlsMinVersion: "tls13", tlsKeyExchangePreferences: HYBRID }, { version: "2.6.2" }),
        "configuration.listener.tlsKeyExchangePreferences",
        /2\.7\.0 or newer; spec\.version is 2\.6\.2/,
      ],
      [
        spec({ tlsMinVersion: "tls13", tlsKeyExchangePreferences: HYBRID }),
        "configuration.listener.tlsKeyExchangePreferences",
        /status\.currentVersion .* is 2\.6\.2: complete the upgrade/,
        "2.6.2",
      ],
    ];
    for (const [s, field, problem, running] of cases) {
      const r = refusal(s, running);
      assert.equal(r.field, field, JSON.stringify(s.configuration));
      assert.match(r.problem, problem);
    }
  });

  it("key exchange from OpenBao 2.7.0: a 2.7.0 pre-release is older, a later pre-release is not", () => {
    assert.equal(keyExchangeSupported("2.7.0"), true);
    assert.equal(keyExchangeSupported("v2.7.0+build.1"), true);
    assert.equal(keyExchangeSupported("2.8.0-beta1"), true);
    assert.equal(keyExchangeSupported("2.7.0-beta1"), false);
    assert.equal(keyExchangeSupported("2.6.3"), false);
  });

  it("validate and the webhook say the same, the webhook also about the release that runs now", () => {
    const cluster = {
      version: "2.7.2",
      storage: { size: "1Gi" },
      tls: { enabled: true, mode: "OperatorManaged" },
      configuration: { listener: { tlsMinVersion: "tls13", tlsKeyExchangePreferences: ["X25519MLKEM768"] } },
    };
    assert.deepEqual(
      checkClusterSpec("bao", cluster, "ns").filter((p) => p.field.includes("listener")),
      [],
    );
    const request = (status?: Record<string, unknown>) =>
      openBaoVerdict({
        uid: "u",
        kind: { group: "openbao.org", version: "v1alpha1", kind: "OpenBaoCluster" },
        operation: "UPDATE",
        name: "bao",
        namespace: "ns",
        object: {
          apiVersion: "openbao.org/v1alpha1",
          kind: "OpenBaoCluster",
          metadata: { name: "bao" },
          spec: cluster,
          ...(status ? { status } : {}),
        },
      } as never);
    const upgrading = request({ currentVersion: "2.6.2" }).errors.filter((e) =>
      e.field?.includes("listener"),
    );
    assert.equal(upgrading.length, 1, JSON.stringify(upgrading));
    assert.equal(upgrading[0]!.field, "spec.configuration.listener.tlsKeyExchangePreferences");
    assert.match(upgrading[0]!.message, /complete the upgrade/);
    assert.deepEqual(
      request({ currentVersion: "2.7.2" }).errors.filter((e) => e.field?.includes("listener")),
      [],
    );
  });
});
