import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { stringify } from "yaml";
import { parseProcessConfig } from "../../src/cli/config.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import {
  CHART,
  named,
  type Obj,
  ofKind,
  processConfig,
  render,
  renderFails,
} from "../support/chart-render.js";
import { upstreamDefaults } from "../support/upstream-chart-values.js";

// Values files written for upstream openbao-operator's chart, under upstream's own names
// (controller.*, healthProbes.*, platform, nameOverride/fullnameOverride, operatorVersion,
// tenancy.targetNamespace, image.tag ""), rendered by the real helm: they install unchanged and
// each does here what it does there.

const OPENBAO = "--set=targets.openbao.enabled=true";
const deployments = (objs: Obj[]) => ofKind(objs, "Deployment");
const podOf = (d: Obj): Obj => d.spec.template.spec;
const container = (d: Obj): Obj => podOf(d).containers[0];
const envNames = (d: Obj): string[] => (container(d).env as Obj[]).map((e) => e.name);
/** The openbao target's section of a process's configuration, read by the target's own parser. */
const openbaoConfig = (objs: Obj[], process: string) => {
  const { namespaces: _ns, ...rest } = processConfig(objs, process).targets.openbao;
  return parseOpenBaoConfig(rest, "targets.openbao");
};

describe("a values file written for upstream's openbao-operator chart, rendered by real helm", () => {
  let dir = "";
  const file = async (name: string, values: Obj): Promise<string> => {
    const path = join(dir, `${name}.yaml`);
    await writeFile(path, stringify(values));
    return `--values=${path}`;
  };
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "upstream-values-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("upstream's whole default file installs unchanged: controller's resources, replicas and security contexts, healthProbes' delays", async () => {
    const objs = await render([await file("defaults", upstreamDefaults()), OPENBAO]);
    for (const d of deployments(objs)) {
      assert.equal(d.spec.replicas, 1, `${d.metadata.name}: controller.replicas`);
      const c = container(d);
      assert.deepEqual(c.resources, upstreamDefaults().controller.resources);
      // The heap flags follow the memory limit upstream's file sets (256Mi).
      const nodeOptions = (c.env as Obj[]).find((e) => e.name === "NODE_OPTIONS");
      assert.equal(nodeOptions?.value, "--max-old-space-size=144 --max-semi-space-size=1");
      assert.deepEqual(
        [c.livenessProbe.initialDelaySeconds, c.livenessProbe.periodSeconds, c.livenessProbe.httpGet.port],
        [15, 20, "probes"],
      );
      assert.deepEqual([c.readinessProbe.initialDelaySeconds, c.readinessProbe.periodSeconds], [5, 10]);
      // upstream's uid and group over this chart's restricted defaults, which stay.
      assert.deepEqual(c.securityContext, {
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
        readOnlyRootFilesystem: true,
        runAsGroup: 65532,
        runAsNonRoot: true,
        runAsUser: 65532,
        seccompProfile: { type: "RuntimeDefault" },
      });
      assert.equal(podOf(d).securityContext.runAsNonRoot, true);
      // image.tag "" is the chart's appVersion, as upstream's chart reads it.
      assert.match(c.image, /^ghcr\.io\/example\/openbao-operator:\d+\.\d+\.\d+/);
    }
    assert.equal(
      openbaoConfig(objs, "po-openbao").executorImage,
      container(named(objs, "Deployment", "po-openbao")).image,
    );
    // upstream's admission policies are on by default: this chart's render them too.
    assert.ok(ofKind(objs, "ValidatingAdmissionPolicy").length > 0);
  });

  it("NOTES: provisioner.* has nothing to apply to, and upstream's names without the openbao target say it is off", async () => {
    // NOTES.txt is rendered only by install: a server dry run against the test's API server writes nothing.
    const notes = async (args: string[]) =>
      (
        await runCommand(await ensureHelm(), [
          "install",
          "po",
          CHART,
          "--dry-run=server",
          "--namespace",
          "default",
          "--kubeconfig",
          sharedEnv().kubeconfigPath,
          ...args,
        ])
      ).stdout.split("NOTES:")[1] ?? "";
    const upstream = await notes([await file("notes", upstreamDefaults()), OPENBAO]);
    assert.match(
      upstream,
      /provisioner\.\* \(affinity, extraArgs, extraEnv, nodeSelector, .*\) has nothing to apply to/,
    );
    assert.doesNotMatch(upstream, /the openbao target is\s+off/);
    // Without the openbao target, upstream's file stops at its admission policies (on by default there).
    assert.match(
      await renderFails([await file("notes-off", upstreamDefaults())]),
      /admissionPolicies\.enabled: the policies guard the openbao target's kinds .*; enable targets\.openbao too/,
    );
    assert.match(
      await notes(["--set=controller.replicas=1"]),
      /upstream openbao-operator's \(controller\), but the openbao target is\s+off here/,
    );
    assert.match(
      await notes(["--set=tenancy.targetNamespace=openbao"]),
      /upstream openbao-operator's \(tenancy\.targetNamespace\), but the openbao target is\s+off/,
    );
    assert.doesNotMatch(await notes([]), /provisioner|openbao target is\s+off/);
  });

  it("controller.*: maps merge over this chart's names, lists are appended, the rest replaces", async () => {
    const objs = await render([
      await file("controller", {
        podLabels: { team: "platform" },
        podAnnotations: { "a.example/x": "1" },
        nodeSelector: { pool: "system" },
        tolerations: [{ key: "a", operator: "Exists" }],
        extraEnv: [{ name: "FIRST", value: "1" }],
        serviceAccount: { annotations: { "iam.example/role": "chart" } },
        affinity: { podAntiAffinity: {} },
        controller: {
          replicas: 3,
          resources: { limits: { memory: "512Mi" } },
          podLabels: { tier: "ops" },
          podAnnotations: { "a.example/y": "2" },
          nodeSelector: { zone: "a" },
          tolerations: [{ key: "b", operator: "Exists" }],
          extraEnv: [{ name: "SECOND", value: "2" }],
          serviceAccount: { annotations: { "iam.example/role": "upstream" } },
          affinity: { nodeAffinity: {} },
        },
      }),
    ]);
    const d = deployments(objs)[0]!;
    assert.equal(d.spec.replicas, 3);
    assert.deepEqual(container(d).resources, { limits: { memory: "512Mi" } });
    assert.ok(
      (container(d).env as Obj[]).some(
        (e) => e.name === "NODE_OPTIONS" && /max-old-space-size=336 /.test(e.value),
      ),
      "the heap flags follow controller.resources' limit",
    );
    const meta = d.spec.template.metadata;
    assert.equal(meta.labels.team, "platform");
    assert.equal(meta.labels.tier, "ops");
    assert.deepEqual([meta.annotations["a.example/x"], meta.annotations["a.example/y"]], ["1", "2"]);
    assert.deepEqual(podOf(d).nodeSelector, { pool: "system", zone: "a" });
    assert.deepEqual(
      podOf(d).tolerations.map((t: Obj) => t.key),
      ["a", "b"],
    );
    assert.deepEqual(podOf(d).affinity, { nodeAffinity: {} });
    assert.deepEqual(envNames(d).slice(-2), ["FIRST", "SECOND"]);
    assert.equal(ofKind(objs, "ServiceAccount")[0]!.metadata.annotations["iam.example/role"], "upstream");
  });

  it("controller.*: what the chart refuses is refused under upstream's name", async () => {
    assert.match(
      await renderFails(['--set-json=controller.extraEnv=[{"name":"POD_NAMESPACE","value":"x"}]']),
      /controller\.extraEnv\[0\]\.name: POD_NAMESPACE is set by the chart itself/,
    );
    assert.match(
      await renderFails([
        '--set-json=extraEnv=[{"name":"A","value":"1"}]',
        '--set-json=controller.extraEnv=[{"name":"A","value":"2"}]',
      ]),
      /controller\.extraEnv\[0\]\.name: A is already set by extraEnv\[0\]/,
    );
    assert.match(
      await renderFails(["--set=controller.podLabels.app\\.kubernetes\\.io/component=x"]),
      /controller\.podLabels\.app\.kubernetes\.io\/component: the chart sets this key itself/,
    );
    assert.match(
      await renderFails(["--set=controller.securityContext.runAsUser=0"]),
      /\/controller\/securityContext\/runAsUser/,
    );
    assert.match(
      await renderFails(["--set=controller.securityContext.capabilities.drop={NET_RAW}"]),
      /controller/,
    );
    assert.match(
      await renderFails(["--set=controller.replicas=2", "--set=leaderElection.enabled=false"]),
      /leaderElection.enabled: false needs controller.replicas: 1 \(it is 2/,
    );
    assert.match(await renderFails(["--set=controller.replica=2"]), /controller/);
  });

  it("healthProbes.*: upstream's name for probes.*, key for key", async () => {
    const objs = await render([
      "--set=healthProbes.port=9091",
      "--set=healthProbes.livenessPeriodSeconds=30",
      "--set=probes.readinessPeriodSeconds=7",
      "--set=networkPolicy.enabled=true",
    ]);
    const d = deployments(objs)[0]!;
    const c = container(d);
    assert.deepEqual(
      c.ports.find((p: Obj) => p.name === "probes"),
      { name: "probes", containerPort: 9091 },
    );
    assert.deepEqual([c.livenessProbe.periodSeconds, c.readinessProbe.periodSeconds], [30, 7]);
    const config = parseProcessConfig(processConfig(objs, d.metadata.name));
    assert.equal(config.probes.port, 9091);
    const policy = ofKind(objs, "NetworkPolicy")[0]!;
    assert.ok(
      policy.spec.ingress.some((r: Obj) => r.ports.some((p: Obj) => p.port === 9091)),
      "the NetworkPolicy opens the probe port healthProbes names",
    );
    assert.match(await renderFails(["--set=healthProbes.port=0"]), /healthProbes/);
  });

  it("controller.extraArgs: --zap-log-level and --platform are taken; any other flag fails naming it", async () => {
    const objs = await render(["--set=controller.extraArgs={--zap-log-level=debug,--platform=openshift}"]);
    const d = deployments(objs)[0]!;
    assert.equal(processConfig(objs, d.metadata.name).logLevel, "debug");
    assert.equal(
      podOf(d).securityContext.runAsUser,
      undefined,
      "--platform=openshift leaves the uid to the SCC",
    );
    const verbose = await render(["--set=controller.extraArgs={--zap-log-level=3}"]);
    assert.equal(processConfig(verbose, deployments(verbose)[0]!.metadata.name).logLevel, "debug");
    assert.match(
      await renderFails(["--set=controller.extraArgs={--leader-elect}"]),
      /controller\.extraArgs\[0\]: "--leader-elect" is a flag of upstream's Go operator with no equivalent here/,
    );
    assert.match(
      await renderFails(["--set=controller.extraArgs={--zap-log-level=loud}"]),
      /controller\.extraArgs\[0\]: --zap-log-level takes debug, info, error, panic or a verbosity above 0, not "loud"/,
    );
    assert.match(
      await renderFails(["--set=controller.extraArgs={--platform=mesos}"]),
      /controller\.extraArgs\[0\]: --platform takes auto, kubernetes or openshift/,
    );
  });

  it("platform: openshift (or auto where security.openshift.io/v1 is served) leaves runAsUser, runAsGroup and fsGroup to the SCC", async () => {
    const ids = (objs: Obj[]) => {
      const d = deployments(objs)[0]!;
      const pod = podOf(d).securityContext;
      const ctr = container(d).securityContext;
      return [pod.runAsUser, pod.runAsGroup, pod.fsGroup, ctr.runAsUser, ctr.runAsGroup];
    };
    const plain = await render([]);
    assert.deepEqual(ids(plain), [65532, 65532, 65532, undefined, undefined]);
    const openshift = await render([
      "--set=platform=openshift",
      "--set=controller.securityContext.runAsUser=1001",
    ]);
    assert.deepEqual(ids(openshift), [undefined, undefined, undefined, undefined, undefined]);
    assert.equal(
      podOf(deployments(openshift)[0]!).securityContext.runAsNonRoot,
      true,
      "restricted still holds",
    );
    assert.deepEqual(ids(await render(["--api-versions=security.openshift.io/v1"])), ids(openshift));
    assert.deepEqual(
      ids(await render(["--api-versions=security.openshift.io/v1", "--set=platform=kubernetes"])),
      ids(plain),
    );
    assert.match(await renderFails(["--set=platform=mesos"]), /platform/);
    // The openbao target is told the same, and decides auto itself at start (its own discovery).
    const platformOf = async (args: string[]) =>
      openbaoConfig(await render([OPENBAO, ...args]), "po-openbao").platform;
    assert.equal(
      await platformOf([]),
      undefined,
      "auto: the target decides (its parser leaves the default out)",
    );
    assert.equal(processConfig(await render([OPENBAO]), "po-openbao").targets.openbao.platform, "auto");
    assert.equal(await platformOf(["--set=platform=openshift"]), "openshift");
    assert.equal(await platformOf(["--set=controller.extraArgs={--platform=kubernetes}"]), "kubernetes");
  });

  it("fullnameOverride and nameOverride: every object name, the Leases and the admission policies the openbao target looks for follow", async () => {
    const objs = await render([
      OPENBAO,
      "--set=admissionPolicies.enabled=true",
      "--set=fullnameOverride=team-bao",
    ]);
    assert.deepEqual(
      deployments(objs)
        .map((d) => d.metadata.name)
        .sort(),
      ["team-bao-openbao", "team-bao-vault"],
    );
    const config = processConfig(objs, "team-bao-openbao");
    assert.equal(config.leaderElection.leaseName, "team-bao-openbao");
    const prefix = config.targets.openbao.admissionPolicies.prefix as string;
    assert.equal(prefix, "team-bao-");
    const policies = ofKind(objs, "ValidatingAdmissionPolicy").map((p) => p.metadata.name as string);
    assert.ok(policies.length > 0 && policies.every((n) => n.startsWith(prefix)), policies.join(", "));
    for (const o of objs) {
      if (o.metadata.namespace !== undefined || o.kind === "CustomResourceDefinition") continue;
      assert.ok(
        !/(^|-)po-/.test(o.metadata.name),
        `${o.kind} ${o.metadata.name} is named after the override`,
      );
    }
    assert.equal(podOf(named(objs, "Deployment", "team-bao-openbao")).serviceAccountName, "team-bao-openbao");
    const renamed = await render(["--set=nameOverride=bao"]);
    assert.deepEqual(
      deployments(renamed).map((d) => d.metadata.name),
      ["po-bao-vault"],
    );
    // The release name already holding nameOverride is not repeated (upstream's rule).
    const held = await render(["--set=nameOverride=p"]);
    assert.deepEqual(
      deployments(held).map((d) => d.metadata.name),
      ["po-vault"],
    );
    assert.match(await renderFails(["--set=fullnameOverride=Team_Bao"]), /fullnameOverride/);
  });

  it("deployments {controller: [openbao]}: upstream's controller names, so its JWT roles' bound ServiceAccount is this operator's", async () => {
    const objs = await render([
      OPENBAO,
      "--set=targets.vault.enabled=false",
      '--set-json=deployments={"controller":["openbao"]}',
      "--set=fullnameOverride=openbao-operator",
    ]);
    assert.deepEqual(
      deployments(objs).map((d) => d.metadata.name),
      ["openbao-operator-controller"],
    );
    assert.equal(podOf(deployments(objs)[0]!).serviceAccountName, "openbao-operator-controller");
    assert.equal(named(objs, "ServiceAccount", "openbao-operator-controller").kind, "ServiceAccount");
    const config = processConfig(objs, "openbao-operator-controller");
    assert.equal(config.leaderElection.leaseName, "openbao-operator-controller");
    assert.deepEqual(Object.keys(config.targets), ["openbao"]);
  });

  it("tenancy.targetNamespace: single mode's namespace of the openbao target, with its Role there", async () => {
    const objs = await render([OPENBAO, "--set=tenancy.targetNamespace=openbao-system"]);
    const config = processConfig(objs, "po-openbao").targets.openbao;
    assert.deepEqual(config.namespaces, ["openbao-system"]);
    assert.ok(
      ofKind(objs, "Role").some((r) => r.metadata.namespace === "openbao-system"),
      "a Role in openbao-system",
    );
    const listed = await render([
      OPENBAO,
      "--set=tenancy.targetNamespace=x",
      "--set=targets.openbao.namespaces={a}",
    ]);
    assert.deepEqual(processConfig(listed, "po-openbao").targets.openbao.namespaces, ["a"]);
  });

  it("operatorVersion: the tag of the executor Jobs' image; without it the operator's own image, which a configured executorImage overrides", async () => {
    const execImage = async (args: string[]) =>
      openbaoConfig(await render([OPENBAO, ...args]), "po-openbao").executorImage;
    assert.equal(await execImage([]), "localhost/platform-operator:dev");
    assert.equal(await execImage(["--set=operatorVersion=0.5.3"]), "localhost/platform-operator:0.5.3");
    const digest = `sha256:${"cd34".repeat(16)}`;
    assert.equal(await execImage([`--set=image.digest=${digest}`]), `localhost/platform-operator@${digest}`);
    assert.equal(
      await execImage([
        "--set=operatorVersion=0.5.3",
        "--set=targets.openbao.config.executorImage=reg/exec:1",
      ]),
      "reg/exec:1",
    );
    assert.match(await renderFails(["--set=operatorVersion=a b"]), /operatorVersion/);
  });
});
