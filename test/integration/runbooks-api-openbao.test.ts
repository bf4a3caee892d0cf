import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { applyAny } from "../../src/runtime/apply.js";
import { JOB, SECRET } from "../../src/runtime/builtin-types.js";
import { silentLogger } from "../../src/runtime/log.js";
import { Manager } from "../../src/runtime/manager.js";
import { registry } from "../../src/runtime/metrics.js";
import { createCertificateAuthority, issueServerCertificate } from "../../src/runtime/pki/x509.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { OPENBAOCLUSTER } from "../../src/targets/openbao/cluster-ref.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { OPENBAORESTORE } from "../../src/targets/openbao/restore/types.js";
import { openbaoTarget } from "../../src/targets/openbao/target.js";
import { requiredExternalNames } from "../../src/targets/openbao/workload/certs/plan.js";
import { ensureNodeBinaries } from "../../src/testenv/node/binaries.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import { makeTempDir, removeTempDir } from "../../src/testenv/tempdirs.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { createOpenBaoCluster, installOpenBaoClusterCrd } from "../support/openbao-cluster.js";
import { block, runShell, toolDir } from "../support/runbook.js";

// The OpenBaoCluster runbook's sections that need no pod (docs/runbooks/openbao.md), with the
// openbao target on the shared API server, the way a reader uses them: a section's `sh` blocks run
// with bash after the fault was made for real, then what the section promises is awaited. The
// sections that need pods are openbao-runbooks-node's.

/** The node's kubectl (built with the node's binaries; no node is started for it). */
const kubectl = async () => (await ensureNodeBinaries()).kubectl;

describe("openbao runbook: Certificate expiring, on the API server", () => {
  it("an External certificate with three days left: the check shows its end date; the documented renewal moves the expiry", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    const ns = await freshNamespace(client, "obrb-tls");
    const dir = await toolDir(await kubectl());
    const files = makeTempDir("runbook-tls");
    const manager = new Manager({ target: "openbao", client, log: silentLogger(), namespaces: [ns] });
    await openbaoTarget().setup(
      manager,
      parseOpenBaoConfig({ pollInterval: "1s", resyncInterval: "1s" }, "targets.openbao"),
    );
    await manager.start();
    const DAY = 86_400_000;
    const expiry = async () =>
      Number(
        new RegExp(
          `^openbao_tls_cert_expiry_timestamp\\{namespace="${ns}",name="bao",type="External"\\} (\\S+)$`,
          "m",
        ).exec(await registry.metrics())?.[1],
      ) * 1000;
    try {
      const cluster = await createOpenBaoCluster(client, ns, "bao", {
        replicas: 1,
        tls: { mode: "External", serverSecretName: "bao-tls" },
      });
      // Broken: the Secret the user keeps holds a leaf that ends in three days.
      const ca = createCertificateAuthority("runbook CA", new Date(), 400 * DAY);
      const issue = (days: number) =>
        issueServerCertificate(ca, {
          commonName: "bao",
          names: requiredExternalNames(cluster as never),
          now: new Date(),
          validityMs: days * DAY,
        });
      const old = issue(3);
      await client.create(SECRET, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "bao-tls", namespace: ns },
        type: "kubernetes.io/tls",
        stringData: { "tls.crt": old.certPem, "tls.key": old.keyPem, "ca.crt": ca.certPem },
      });
      const oldEnd = Date.parse(new X509Certificate(old.certPem).validTo);
      await eventually(
        async () => ((await expiry()) === oldEnd ? true : undefined),
        60_000,
        "the old expiry",
      );
      assert.ok(oldEnd - Date.now() < 7 * DAY, "within the alert's 7 days");
      // The pass's status is written after the metric: the condition is what the check reads.
      await eventually(
        async () => {
          const c = await client.get<
            KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
          >(OPENBAOCLUSTER, "bao", ns);
          return c.status?.conditions?.some((x) => x.type === "TLSReady" && x.status === "True")
            ? true
            : undefined;
        },
        60_000,
        "TLSReady",
      );
      const env = {
        NS: ns,
        NAME: "bao",
        PATH: `${dir}:${process.env.PATH}`,
        KUBECONFIG: sharedEnv().kubeconfigPath,
      };
      const check = block("openbao.md", "Certificate expiring", "openssl x509");
      const enddate = (out: string) => Date.parse(/^notAfter=(.+)$/m.exec(out)?.[1] ?? "");
      const seen = await runShell(check, env, true);
      assert.match(seen, /^External Ready: Secret bao-tls is valid$/m, seen);
      assert.equal(enddate(seen), oldEnd, seen);

      // Act: the renewed certificate's files, applied as documented.
      const fresh = issue(365);
      writeFileSync(join(files, "tls.crt"), fresh.certPem);
      writeFileSync(join(files, "tls.key"), fresh.keyPem);
      writeFileSync(join(files, "ca.crt"), ca.certPem);
      await runShell(
        block("openbao.md", "Certificate expiring", "create secret generic"),
        { ...env, SECRET: "bao-tls" },
        false,
        files,
      );
      const newEnd = Date.parse(new X509Certificate(fresh.certPem).validTo);
      await eventually(
        async () => ((await expiry()) === newEnd ? true : undefined),
        60_000,
        "the new expiry",
      );
      assert.ok(newEnd - Date.now() > 300 * DAY);
      const after = await runShell(check, env, true);
      assert.match(after, /^External Ready: Secret bao-tls is valid$/m, after);
      assert.equal(enddate(after), newEnd, after);
    } finally {
      await manager.stop();
      removeTempDir(files);
      removeTempDir(dir);
      client.close();
    }
  });
});

describe("openbao runbook: Voters not ready, on the API server", () => {
  it("the route check shows the row that applies: a spec the operator refuses, and voters that wait for their pods", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    const ns = await freshNamespace(client, "obrb-voters");
    const dir = await toolDir(await kubectl());
    const manager = new Manager({ target: "openbao", client, log: silentLogger(), namespaces: [ns] });
    await openbaoTarget().setup(
      manager,
      parseOpenBaoConfig({ pollInterval: "1s", resyncInterval: "1s" }, "targets.openbao"),
    );
    await manager.start();
    const env = { NS: ns, PATH: `${dir}:${process.env.PATH}`, KUBECONFIG: sharedEnv().kubeconfigPath };
    const check = block("openbao.md", "Voters not ready", "range .status.conditions");
    try {
      // Broken twice: an image whose tag is another version than spec.version (the operator
      // refuses the spec), and voters with no pod to run them (no node serves this API server).
      await createOpenBaoCluster(client, ns, "bad", { replicas: 3, image: "openbao/openbao:2.3.0" });
      await createOpenBaoCluster(client, ns, "bao", { replicas: 3 });
      const shown = (name: string, want: RegExp) =>
        eventually(
          async () => {
            const out = await runShell(check, { ...env, NAME: name }, true);
            return want.test(out) ? out : undefined;
          },
          60_000,
          `${name}: ${want}`,
        );
      // Row "Degraded=True, InvalidSpec (phase Failed)": the message names the field.
      const bad = await shown("bad", /^Degraded=True InvalidSpec: /m);
      assert.match(bad, /^Failed 0\/3$/m, bad);
      assert.match(
        bad,
        /^Degraded=True InvalidSpec: validate: spec\.image: tag 2\.3\.0 is another version than spec\.version 2\.7\.2$/m,
      );
      // Row "Degraded=False, Reconciling": Available names the step and the pod it waits for.
      const waiting = await shown("bao", /^Degraded=False Reconciling: /m);
      assert.match(
        waiting,
        /^Available=False PodNotReady: initialization: waiting for pod bao-0 to run$/m,
        waiting,
      );
      assert.doesNotMatch(waiting, /^Degraded=True/m);
    } finally {
      await manager.stop();
      removeTempDir(dir);
      client.close();
    }
  });
});

describe("openbao runbook: Stuck restore, on the API server", () => {
  it("a restore into a cluster that is not initialized: the check says why it waits; deleting it leaves no lock and no Job", async () => {
    const client = clientFor(sharedEnv().kubeconfigPath);
    await installOpenBaoClusterCrd(client);
    const ns = await freshNamespace(client, "obrb-restore");
    const dir = await toolDir(await kubectl());
    const manager = new Manager({ target: "openbao", client, log: silentLogger(), namespaces: [ns] });
    await openbaoTarget().setup(
      manager,
      parseOpenBaoConfig({ pollInterval: "1s", resyncInterval: "1s" }, "targets.openbao"),
    );
    await manager.start();
    try {
      // Broken: the cluster has no pods here, so it never initializes; the restore must wait.
      await createOpenBaoCluster(client, ns, "bao", { replicas: 1 });
      await applyAny(
        client,
        {
          apiVersion: "openbao.org/v1alpha1",
          kind: "OpenBaoRestore",
          metadata: { name: "back", namespace: ns },
          spec: {
            cluster: "bao",
            source: {
              key: "snaps/bao/latest.snap",
              target: {
                bucket: "snaps",
                endpoint: "http://s3.invalid:9000",
                credentialsSecretRef: { name: "s3" },
              },
            },
            tokenSecretRef: { name: "restore-token" },
          },
        },
        { fieldManager: "test-user", force: true },
      );
      await eventually(
        async () => {
          const r = await client.get<KubeObject & { status?: { phase?: string } }>(
            OPENBAORESTORE,
            "back",
            ns,
          );
          return r.status?.phase === "Validating" ? r : undefined;
        },
        60_000,
        "the restore to wait in Validating",
      );
      const env = {
        NS: ns,
        NAME: "bao",
        RNAME: "back",
        PATH: `${dir}:${process.env.PATH}`,
        KUBECONFIG: sharedEnv().kubeconfigPath,
      };
      const seen = await runShell(block("openbao.md", "Stuck restore", "get openbaorestore"), env, true);
      assert.match(seen, /^\s+phase: Validating$/m);
      assert.match(seen, /message: OpenBaoCluster \S+\/bao is not initialized yet/, seen);
      assert.match(seen, /reason: ClusterNotInitialized/);
      assert.match(seen, /jobs.batch "restore-back" not found/, "no restore Job was made");

      // Act: the request is immutable; deleting it goes through its finalizer, holding nothing.
      await runShell(block("openbao.md", "Stuck restore", "kubectl delete openbaorestore"), env);
      assert.equal(await client.getOrUndefined(OPENBAORESTORE, "back", ns), undefined);
      const cluster = await client.get<KubeObject & { status?: { operationLock?: unknown } }>(
        OPENBAOCLUSTER,
        "bao",
        ns,
      );
      assert.equal(cluster.status?.operationLock, undefined, "no lock left on the cluster");
      assert.deepEqual((await client.list(JOB, { namespace: ns })).items, []);
    } finally {
      await manager.stop();
      removeTempDir(dir);
      client.close();
    }
  });
});
