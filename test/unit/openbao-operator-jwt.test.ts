import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { serviceAccountSubject, subjectServiceAccount } from "../../src/targets/openbao/steps/oidc-facts.js";
import { operatorAudience, operatorServiceAccount } from "../../src/targets/openbao/steps/operator-jwt.js";

// A self-initialized cluster keeps no root token: the operator logs in as selfInit.oidc's operator
// role with a token of its own ServiceAccount. Outside a pod that ServiceAccount is configured.

describe("the operator's own identity for selfInit.oidc's operator role", () => {
  it("operatorServiceAccount is <namespace>/<name>; anything else is refused naming the field", () => {
    assert.deepEqual(
      parseOpenBaoConfig({ operatorServiceAccount: "ops/po-openbao" }, "targets.openbao")
        .operatorServiceAccount,
      { namespace: "ops", name: "po-openbao" },
    );
    assert.equal(parseOpenBaoConfig({}, "targets.openbao").operatorServiceAccount, undefined);
    for (const bad of ["po-openbao", "ops/", "/x", "a/b/c", "Ops/x", 3])
      assert.throws(
        () => parseOpenBaoConfig({ operatorServiceAccount: bad }, "targets.openbao"),
        /targets\.openbao\.operatorServiceAccount/,
        String(bad),
      );
  });

  it("the configured ServiceAccount is the one logged in as, and the subject the bootstrap binds", () => {
    const sa = { namespace: "ops", name: "po-openbao" };
    assert.deepEqual(operatorServiceAccount(sa), sa);
    assert.equal(serviceAccountSubject(sa), "system:serviceaccount:ops:po-openbao");
    assert.deepEqual(subjectServiceAccount("system:serviceaccount:ops:po-openbao"), sa);
    assert.equal(subjectServiceAccount("kubernetes-admin"), undefined);
  });

  it("the token is asked for the audience the operator role is bound to", () => {
    const c = (oidc: Record<string, unknown>) =>
      ({
        spec: { selfInit: { enabled: true, oidc: { enabled: true, ...oidc } } },
      }) as unknown as OpenBaoCluster;
    assert.equal(operatorAudience(c({})), "openbao-internal");
    assert.equal(operatorAudience(c({ audience: " bao-ops " })), "bao-ops");
    // The target's openBaoAudience, when the spec names none.
    assert.equal(operatorAudience(c({}), "corp-bao"), "corp-bao");
    assert.equal(operatorAudience(c({ audience: "bao-ops" }), "corp-bao"), "bao-ops");
  });
});
