import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { OpenBaoClusterKind } from "../../src/apis/openbaocluster.js";
import { openBaoSampleForLocalNode } from "../../src/cli/dev-samples.js";
import { describeFormation, type Formation, formed } from "../../src/cli/openbao-formation.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { validateOpenBaoDocuments } from "../../src/targets/openbao/validate/index.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const sampleFile = join(root, "deploy/samples/openbaocluster.yaml");
const sample = () => parse(readFileSync(sampleFile, "utf8")) as KubeObject;

describe("npm start: the OpenBaoCluster sample on the local node", () => {
  it("pins the node's image version, leaves out backups and self-init, and says so for each", () => {
    const original = sample();
    const { doc, changes } = openBaoSampleForLocalNode(original, "2.7.2");
    const spec = doc["spec"] as Record<string, unknown>;
    assert.equal(spec["version"], "2.7.2");
    assert.equal(spec["backup"], undefined);
    assert.equal(spec["selfInit"], undefined);
    assert.equal((spec["upgrade"] as Record<string, unknown>)["preUpgradeSnapshot"], undefined);
    // Everything else is the sample as written: three OperatorManaged voters.
    assert.equal(spec["replicas"], 3);
    assert.deepEqual(spec["tls"], (original["spec"] as Record<string, unknown>)["tls"]);
    assert.equal(changes.length, 5);
    assert.equal(
      (spec["audit"] as { fileOptions: { filePath: string } }[])[0]!.fileOptions.filePath,
      "stdout",
    );
    assert.match(changes[0]!, /spec\.version 2\.4\.1 → 2\.7\.2/);
    assert.ok(changes.some((c) => c.startsWith("spec.backup left out")));
    assert.ok(changes.some((c) => c.startsWith("spec.selfInit left out")));
    // The input is not touched (it is the file's own document).
    assert.equal((original["spec"] as Record<string, unknown>)["version"], "2.4.1");
    assert.ok((original["spec"] as Record<string, unknown>)["selfInit"]);
  });

  it("the adjusted sample passes the openbao target's offline validation", () => {
    const { doc } = openBaoSampleForLocalNode(sample(), "2.7.2");
    assert.equal(doc.kind, OpenBaoClusterKind);
    assert.deepEqual(validateOpenBaoDocuments([{ file: "sample", line: 1, document: 1, doc }]), []);
  });

  it("changes nothing, and says nothing, when the sample already fits", () => {
    const { doc } = openBaoSampleForLocalNode(sample(), "2.7.2");
    const again = openBaoSampleForLocalNode(doc, "2.7.2");
    assert.deepEqual(again.changes, []);
    assert.deepEqual(again.doc, doc);
  });
});

describe("npm start: the line that shows an OpenBao cluster forming", () => {
  const ref = { name: "secrets", namespace: "openbao" };
  const base: Formation = {
    exists: true,
    phase: "Initializing",
    initialized: false,
    desired: 3,
    readyReplicas: 0,
    pods: [{ name: "secrets-0", state: "Pending" }],
  };

  it("names phase, initialization, ready voters, leader and pods", () => {
    assert.equal(
      describeFormation(ref, base),
      "openbao openbao/secrets: Initializing, initialized no, 0/3 voter pods ready, active leader - | pods: secrets-0 Pending",
    );
    assert.equal(
      describeFormation(ref, { ...base, exists: false }),
      "openbao openbao/secrets: not created yet",
    );
  });

  it("counts only OpenBao's Raft voters, and says formed once all of them are voters and ready", () => {
    const peer = (node_id: string, voter: boolean) => ({ node_id, address: "", leader: false, voter });
    const growing: Formation = {
      ...base,
      phase: "Running",
      initialized: true,
      readyReplicas: 3,
      activeLeader: "secrets-0",
      peers: [peer("secrets-0", true), peer("secrets-1", true), peer("secrets-2", false)],
    };
    assert.equal(formed(growing), false);
    assert.match(
      describeFormation(ref, growing),
      /Raft voters 2 \(secrets-0, secrets-1\), non-voters secrets-2/,
    );
    assert.doesNotMatch(describeFormation(ref, growing), /formed/);
    const done = {
      ...growing,
      peers: [peer("secrets-0", true), peer("secrets-1", true), peer("secrets-2", true)],
    };
    assert.equal(formed(done), true);
    assert.match(describeFormation(ref, done), /Raft voters 3 .*active leader secrets-0.*\| formed$/);
    // Ready pods alone are not enough: OpenBao must list them.
    assert.equal(formed({ ...done, peers: undefined }), false);
  });
});
