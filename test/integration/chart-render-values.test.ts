import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseProcessConfig } from "../../src/cli/config.js";
import { parseOpenBaoConfig } from "../../src/targets/openbao/config.js";
import { DEFAULT_DENIED_NAMESPACES } from "../../src/targets/openbao/tenant/guard.js";
import { named, type Obj, ofKind, processConfig, render, renderFails } from "../support/chart-render.js";

// The values upstream's chart takes, in this chart's layout (docs/install.md lists where each of
// upstream's keys lives here), rendered by the real helm; what a value changes in the operator's
// configuration file is read back with the operator's own parser.

const ALL_TARGETS = [
  "--set=targets.openbao.enabled=true",
  "--set=targets.gitlab.enabled=true",
  "--set=targets.openbao.namespaces={bao}",
  "--set=targets.gitlab.namespaces={gitlab}",
];
const MONITORING_KINDS = [
  "--api-versions=monitoring.coreos.com/v1/PodMonitor",
  "--api-versions=monitoring.coreos.com/v1/PrometheusRule",
];
const SCRAPE_KINDS = [
  "--api-versions=monitoring.coreos.com/v1/ServiceMonitor",
  "--api-versions=operator.victoriametrics.com/v1beta1/VMServiceScrape",
];
const DIGEST = `sha256:${"ab12".repeat(16)}`;

const deployments = (objs: Obj[]) => ofKind(objs, "Deployment");
const podOf = (d: Obj): Obj => d.spec.template.spec;
const container = (d: Obj): Obj => podOf(d).containers[0];
type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[] };
const rulesOf = (objs: Obj[], kind: "Role" | "ClusterRole"): Rule[] =>
  ofKind(objs, kind).flatMap((r) => (r.rules ?? []) as Rule[]);

describe("the chart's values for what upstream's chart takes, rendered by real helm", () => {
  it("extraEnv: appended to the operator container, and names the chart sets are refused", async () => {
    const objs = await render([
      ...ALL_TARGETS,
      '--set-json=extraEnv=[{"name":"OPENBAO_ADDR","value":"https://bao:8200"},{"name":"DYNAMIC_CHART_REPOSITORY","valueFrom":{"configMapKeyRef":{"name":"charts","key":"url"}}}]',
    ]);
    for (const d of deployments(objs)) {
      const env = container(d).env as Obj[];
      assert.deepEqual(env.slice(-2), [
        { name: "OPENBAO_ADDR", value: "https://bao:8200" },
        { name: "DYNAMIC_CHART_REPOSITORY", valueFrom: { configMapKeyRef: { name: "charts", key: "url" } } },
      ]);
      assert.equal(new Set(env.map((e) => e.name)).size, env.length, "every name once");
    }
    assert.match(
      await renderFails(['--set-json=extraEnv=[{"name":"POD_NAMESPACE","value":"x"}]']),
      /extraEnv\[0\]\.name: POD_NAMESPACE is set by the chart itself/,
    );
    assert.match(
      await renderFails(['--set-json=extraEnv=[{"name":"MALLOC_ARENA_MAX","value":"8"}]']),
      /extraEnv\[0\]\.name: MALLOC_ARENA_MAX is set by the chart itself/,
    );
    assert.match(
      await renderFails(['--set-json=extraEnv=[{"name":"A","value":"1"},{"name":"A","value":"2"}]']),
      /extraEnv\[1\]\.name: A is already set by extraEnv\[0\]/,
    );
    assert.match(await renderFails(['--set-json=extraEnv=[{"value":"1"}]']), /extraEnv/);
  });

  it("dynamicChartPull.trustedKeys: one keyring ConfigMap, mounted with DYNAMIC_CHART_KEYRING in the gitlab process only; edits roll no pod", async () => {
    const key = (n: string) =>
      `-----BEGIN PGP PUBLIC KEY BLOCK-----\n\ndGVzdC1rZXk${n}\n=AAAA\n-----END PGP PUBLIC KEY BLOCK-----\n`;
    const keyringOf = (objs: Obj[]) =>
      named(objs, "ConfigMap", "po-chart-keyring").data["keyring.asc"] as string;
    const mounted = (d: Obj) => ({
      env: (container(d).env as Obj[]).filter((e) => e.name === "DYNAMIC_CHART_KEYRING"),
      mounts: (container(d).volumeMounts as Obj[]).filter((m) => m.name === "chart-keyring"),
      volumes: (podOf(d).volumes as Obj[]).filter((v) => v.name === "chart-keyring"),
    });
    // Default: an explicit empty list (GitLab's key is not shipped), so the keyring trusts nothing.
    const plain = await render(ALL_TARGETS);
    assert.equal(keyringOf(plain), "");
    for (const d of deployments(plain)) {
      const m = mounted(d);
      if (d.metadata.name === "po-gitlab") {
        assert.deepEqual(m.env, [
          { name: "DYNAMIC_CHART_KEYRING", value: "/etc/platform-operator/chart-keyring/keyring.asc" },
        ]);
        assert.deepEqual(m.mounts, [
          { name: "chart-keyring", mountPath: "/etc/platform-operator/chart-keyring", readOnly: true },
        ]);
        assert.deepEqual(m.volumes, [{ name: "chart-keyring", configMap: { name: "po-chart-keyring" } }]);
      } else assert.deepEqual(m, { env: [], mounts: [], volumes: [] }, `${d.metadata.name} has no keyring`);
    }
    // Two keys, in order, one after the other; the pods' checksum does not move (no roll for a key).
    const two = await render([
      ...ALL_TARGETS,
      `--set-json=dynamicChartPull.trustedKeys=${JSON.stringify([key("1"), key("2")])}`,
    ]);
    assert.equal(keyringOf(two), `${key("1").trim()}\n${key("2").trim()}\n`.replace(/^\n/, ""));
    const checksum = (objs: Obj[]) =>
      named(objs, "Deployment", "po-gitlab").spec.template.metadata.annotations["checksum/config"];
    assert.equal(checksum(two), checksum(plain));
    // One process for every target: that process mounts it.
    const one = await render([...ALL_TARGETS, '--set-json=deployments={"all":["vault","openbao","gitlab"]}']);
    assert.equal(mounted(named(one, "Deployment", "po-all")).mounts.length, 1);
    // Without the gitlab target none of it is rendered, whatever the value says.
    const noGitlab = await render([`--set-json=dynamicChartPull.trustedKeys=${JSON.stringify([key("1")])}`]);
    assert.ok(!noGitlab.some((o) => o.kind === "ConfigMap" && o.metadata.name === "po-chart-keyring"));
    assert.deepEqual(
      deployments(noGitlab).flatMap((d) => mounted(d).env),
      [],
    );
    // Refused, naming the entry: a private key, and what is no armored public key at all.
    const secret = key("1").replaceAll("PUBLIC KEY BLOCK", "PRIVATE KEY BLOCK");
    assert.match(
      await renderFails([
        ...ALL_TARGETS,
        `--set-json=dynamicChartPull.trustedKeys=${JSON.stringify([key("1"), secret])}`,
      ]),
      /dynamicChartPull.trustedKeys.1/,
    );
    assert.match(
      await renderFails([
        ...ALL_TARGETS,
        `--set-json=dynamicChartPull.trustedKeys=${JSON.stringify([`${key("1")}-----BEGIN PGP PRIVATE KEY BLOCK-----`])}`,
      ]),
      /dynamicChartPull\.trustedKeys\[0\]: this is a private key/,
    );
    assert.match(
      await renderFails([
        ...ALL_TARGETS,
        "--set=dynamicChartPull.trustedKeys[0]=5E46F79EF5836E986A663B4AE30F9C687683D663",
      ]),
      /dynamicChartPull.trustedKeys.0/,
    );
    // The chart sets DYNAMIC_CHART_KEYRING itself where the gitlab target runs.
    assert.match(
      await renderFails([
        ...ALL_TARGETS,
        '--set-json=extraEnv=[{"name":"DYNAMIC_CHART_KEYRING","value":"/k"}]',
      ]),
      /extraEnv\[0\]\.name: DYNAMIC_CHART_KEYRING is set by the chart itself/,
    );
  });

  it("podLabels and podAnnotations: on every operator pod, beside the chart's own, which they may not replace", async () => {
    const objs = await render([
      ...ALL_TARGETS,
      "--set=podLabels.team=platform",
      "--set=podAnnotations.example\\.com/owner=ops",
    ]);
    for (const d of deployments(objs)) {
      const meta = d.spec.template.metadata;
      assert.equal(meta.labels.team, "platform");
      // The selector still selects the pods.
      for (const [k, v] of Object.entries(d.spec.selector.matchLabels)) assert.equal(meta.labels[k], v);
      assert.equal(meta.annotations["example.com/owner"], "ops");
      assert.match(meta.annotations["checksum/config"], /^[0-9a-f]{64}$/);
    }
    assert.match(
      await renderFails(["--set=podLabels.app\\.kubernetes\\.io/component=x"]),
      /podLabels\.app\.kubernetes\.io\/component: the chart sets this key itself \(to "vault"\)/,
    );
    assert.match(
      await renderFails(["--set=podAnnotations.checksum/config=x"]),
      /podAnnotations\.checksum\/config: the chart sets this key itself/,
    );
    assert.match(await renderFails(["--set=podLabels.team=not a label value"]), /podLabels/);
  });

  it("podSecurityContext and securityContext: merged over restricted defaults; what restricted refuses is refused, naming the value", async () => {
    const objs = await render([
      "--set=podSecurityContext.runAsUser=1000",
      "--set=podSecurityContext.fsGroup=2000",
      "--set=podSecurityContext.supplementalGroups={3000}",
      "--set=securityContext.seLinuxOptions.level=s0:c1\\,c2",
    ]);
    const [d] = deployments(objs);
    assert.deepEqual(podOf(d!).securityContext, {
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 65532,
      fsGroup: 2000,
      supplementalGroups: [3000],
      seccompProfile: { type: "RuntimeDefault" },
    });
    assert.deepEqual(container(d!).securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
      seLinuxOptions: { level: "s0:c1,c2" },
    });
    // Each a value Pod Security restricted (or baseline, which it includes) does not admit.
    const refused: [string, RegExp][] = [
      [
        "--set=securityContext.allowPrivilegeEscalation=true",
        /securityContext\/allowPrivilegeEscalation|securityContext\.allowPrivilegeEscalation/,
      ],
      ["--set=securityContext.privileged=true", /securityContext.privileged/],
      ["--set=securityContext.runAsNonRoot=false", /securityContext.runAsNonRoot/],
      ["--set=podSecurityContext.runAsNonRoot=false", /podSecurityContext.runAsNonRoot/],
      ["--set=podSecurityContext.runAsUser=0", /podSecurityContext.runAsUser/],
      ["--set=securityContext.runAsUser=0", /securityContext.runAsUser/],
      ["--set=securityContext.capabilities.add={NET_ADMIN}", /securityContext.capabilities.add/],
      ["--set=securityContext.capabilities.drop={NET_RAW}", /securityContext.capabilities.drop/],
      ["--set=podSecurityContext.seccompProfile.type=Unconfined", /podSecurityContext.seccompProfile.type/],
      ["--set=securityContext.appArmorProfile.type=Unconfined", /securityContext.appArmorProfile.type/],
      [
        "--set=securityContext.seLinuxOptions.user=root",
        /securityContext\/seLinuxOptions.*'user' not allowed/,
      ],
      ["--set=securityContext.procMount=Unmasked", /securityContext.procMount/],
      ["--set=securityContext.readOnlyRootFilesystem=false", /securityContext.readOnlyRootFilesystem/],
      [
        "--set=podSecurityContext.sysctls[0].name=net.core.somaxconn",
        /podSecurityContext.*'sysctls' not allowed/,
      ],
      [
        "--set=podSecurityContext.windowsOptions.hostProcess=true",
        /podSecurityContext.*'windowsOptions' not allowed/,
      ],
    ];
    for (const [arg, message] of refused) assert.match(await renderFails([arg]), message, arg);
    // A default taken away with null: the merged result must still say what restricted needs.
    assert.match(
      await renderFails([
        "--set=podSecurityContext.seccompProfile=null",
        "--set=securityContext.seccompProfile=null",
      ]),
      /seccompProfile.*Pod Security restricted needs a seccomp profile/,
    );
    assert.match(
      await renderFails(["--set=securityContext.allowPrivilegeEscalation=null"]),
      /securityContext.allowPrivilegeEscalation: Pod Security restricted needs false/,
    );
    assert.match(
      await renderFails([
        "--set=podSecurityContext.runAsNonRoot=null",
        "--set=securityContext.runAsNonRoot=null",
      ]),
      /runAsNonRoot: Pod Security restricted needs runAsNonRoot: true/,
    );
    // Either level may carry a requirement: the seccomp profile on the container alone is enough.
    const containerOnly = await render(["--set=podSecurityContext.seccompProfile=null"]);
    assert.equal(podOf(deployments(containerOnly)[0]!).securityContext.seccompProfile, undefined);
  });

  it("serviceAccount.annotations: on each process's ServiceAccount only", async () => {
    const objs = await render([
      ...ALL_TARGETS,
      ...MONITORING_KINDS,
      "--set=serviceAccount.annotations.iam\\.gke\\.io/gcp-service-account=po@p.iam.gserviceaccount.com",
    ]);
    for (const name of ["po-vault", "po-openbao", "po-gitlab"])
      assert.deepEqual(named(objs, "ServiceAccount", name).metadata.annotations, {
        "iam.gke.io/gcp-service-account": "po@p.iam.gserviceaccount.com",
      });
    assert.equal(named(objs, "ServiceAccount", "po-vault-scrape").metadata.annotations, undefined);
    assert.equal(named(await render([]), "ServiceAccount", "po-vault").metadata.annotations, undefined);
  });

  it("image.digest: the image is repository@digest, else repository:tag", async () => {
    assert.equal(container(deployments(await render([]))[0]!).image, "localhost/platform-operator:dev");
    const pinned = await render([`--set=image.digest=${DIGEST}`, "--set=image.repository=ghcr.io/x/po"]);
    assert.equal(container(deployments(pinned)[0]!).image, `ghcr.io/x/po@${DIGEST}`);
    assert.match(await renderFails(["--set=image.digest=latest"]), /image.digest/);
  });

  it("leaderElection.enabled: false tells the operator, drops the Lease Role, and needs replicas: 1", async () => {
    const on = await render([]);
    assert.equal(processConfig(on, "po-vault").leaderElection.enabled, true);
    assert.ok(named(on, "Role", "po-vault-leases"));
    const off = await render(["--set=leaderElection.enabled=false", "--set=replicas=1"]);
    const cfg = parseProcessConfig(processConfig(off, "po-vault"));
    assert.equal(cfg.leaderElection.enabled, false, "the operator's parser reads it off");
    assert.equal(ofKind(off, "Role").filter((r) => r.metadata.name.endsWith("-leases")).length, 0);
    assert.ok(!rulesOf(off, "Role").some((r) => r.resources?.includes("leases")));
    assert.equal(deployments(off)[0]!.spec.replicas, 1);
    assert.match(
      await renderFails(["--set=leaderElection.enabled=false"]),
      /leaderElection.enabled: false needs replicas: 1 \(it is 2/,
    );
  });

  it("gatewayAPI.enabled: false grants no Gateway API kind and tells the openbao target not to read them", async () => {
    const gatewayRules = (objs: Obj[]) =>
      [...rulesOf(objs, "Role"), ...rulesOf(objs, "ClusterRole")].filter((r) =>
        r.apiGroups?.includes("gateway.networking.k8s.io"),
      );
    const on = await render(ALL_TARGETS);
    assert.deepEqual(
      gatewayRules(on)
        .flatMap((r) => r.resources)
        .sort(),
      // gateways and gatewayclasses twice: gitlab's chart renders them, openbao reads them (GatewayIntegrationReady).
      [
        "backendtlspolicies",
        "gatewayclasses",
        "gatewayclasses",
        "gateways",
        "gateways",
        "httproutes",
        "httproutes",
        "tlsroutes",
      ],
    );
    assert.equal(processConfig(on, "po-openbao").targets.openbao.gatewayAPI, undefined);
    const off = await render([...ALL_TARGETS, "--set=gatewayAPI.enabled=false"]);
    assert.deepEqual(gatewayRules(off), []);
    const section = processConfig(off, "po-openbao").targets.openbao;
    assert.equal(section.gatewayAPI, false);
    const { namespaces: _ns, ...rest } = section;
    assert.equal(
      parseOpenBaoConfig(rest, "targets.openbao").gatewayAPI,
      false,
      "the target's parser reads it",
    );
    // The gitlab process had only the GatewayClass rule cluster-wide: an empty rule list, not a broken one.
    assert.deepEqual(named(off, "ClusterRole", "ops-po-gitlab").rules, [
      { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
      { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
    ]);
    const bare = await render([
      ...ALL_TARGETS,
      "--set=gatewayAPI.enabled=false",
      "--set=metrics.enabled=false",
    ]);
    assert.deepEqual(named(bare, "ClusterRole", "ops-po-gitlab").rules, []);
  });

  it("metrics.enabled: false serves /metrics nowhere and renders nothing that scrapes, alerts on or charts it", async () => {
    const on = await render([...ALL_TARGETS, ...MONITORING_KINDS, "--set=networkPolicy.enabled=true"]);
    for (const kind of ["PodMonitor", "PrometheusRule"]) assert.ok(ofKind(on, kind).length > 0, kind);
    const off = await render([
      ...ALL_TARGETS,
      ...MONITORING_KINDS,
      "--set=metrics.enabled=false",
      "--set=networkPolicy.enabled=true",
    ]);
    for (const d of deployments(off)) {
      assert.deepEqual(
        (container(d).ports as Obj[]).map((p) => p.name),
        ["probes"],
      );
      assert.ok(!podOf(d).volumes.some((v: Obj) => v.name === "metrics-tls"));
    }
    const cfg = parseProcessConfig(processConfig(off, "po-openbao"));
    assert.equal(cfg.metrics?.enabled, false, "the operator's parser reads metrics off");
    for (const kind of ["PodMonitor", "PrometheusRule"]) assert.equal(ofKind(off, kind).length, 0, kind);
    assert.equal(ofKind(off, "Secret").length, 0, "no metrics certificate, no scrape token");
    assert.ok(!ofKind(off, "Service").some((s) => s.metadata.name.endsWith("-metrics")));
    assert.ok(!ofKind(off, "ConfigMap").some((c) => c.metadata.labels?.grafana_dashboard));
    assert.ok(!rulesOf(off, "ClusterRole").some((r) => r.resources?.includes("tokenreviews")));
    for (const np of ofKind(off, "NetworkPolicy"))
      assert.deepEqual(
        np.spec.ingress.flatMap((i: Obj) => i.ports.map((p: Obj) => p.port)),
        [8081],
      );
  });

  it("metrics.certificate: operator makes its own in memory; no Secret, and the same text on every render", async () => {
    const chart = await render([]);
    assert.ok(named(chart, "Secret", "po-vault-metrics-tls"));
    assert.equal(
      processConfig(chart, "po-vault").metrics.certFile,
      "/etc/platform-operator/metrics-tls/tls.crt",
    );
    const objs = await render(["--set=metrics.certificate=operator"]);
    assert.equal(ofKind(objs, "Secret").length, 0);
    const cfg = parseProcessConfig(processConfig(objs, "po-vault"));
    assert.deepEqual(
      { secure: cfg.metrics?.secure, selfSigned: cfg.metrics?.selfSigned, certFile: cfg.metrics?.certFile },
      { secure: true, selfSigned: true, certFile: undefined },
    );
    assert.ok(!podOf(deployments(objs)[0]!).volumes.some((v: Obj) => v.name === "metrics-tls"));
    assert.deepEqual(await render(["--set=metrics.certificate=operator"]), objs);
    assert.match(await renderFails(["--set=metrics.certificate=vault"]), /metrics.certificate/);
  });

  it("probes: initial delays and periods of the liveness and readiness probes", async () => {
    const objs = await render([
      "--set=probes.livenessInitialDelaySeconds=15",
      "--set=probes.livenessPeriodSeconds=20",
      "--set=probes.readinessInitialDelaySeconds=5",
      "--set=probes.readinessPeriodSeconds=10",
    ]);
    const c = container(deployments(objs)[0]!);
    assert.deepEqual([c.livenessProbe.initialDelaySeconds, c.livenessProbe.periodSeconds], [15, 20]);
    assert.deepEqual([c.readinessProbe.initialDelaySeconds, c.readinessProbe.periodSeconds], [5, 10]);
    const d = container(deployments(await render([]))[0]!);
    assert.deepEqual([d.livenessProbe.periodSeconds, d.readinessProbe.periodSeconds], [10, 5]);
    assert.match(
      await renderFails(["--set=probes.readinessPeriodSeconds=0"]),
      /probes.readinessPeriodSeconds/,
    );
  });

  /** The openbao section of the process's configuration file, read by the target's own parser. */
  const openbaoConfig = (objs: Obj[]) => {
    const { namespaces: _ns, ...rest } = processConfig(objs, "po-openbao").targets.openbao;
    return parseOpenBaoConfig(rest, "targets.openbao");
  };
  const MULTI = [...ALL_TARGETS, "--set=tenancy.mode=multi", "--set=admissionPolicies.enabled=true"];
  const namespaceVerbs = (objs: Obj[]) =>
    (named(objs, "ClusterRole", "ops-po-openbao").rules as Rule[])
      .filter((r) => r.resources?.includes("namespaces"))
      .flatMap((r) => r.verbs);
  const NS_POLICY = "po-restrict-provisioner-namespace-mutations";

  it("tenancy.namespacePodSecurityLabels.mode: enforce patches the labels; external grants no namespace write, tells the operator, and the policy refuses its namespace updates", async () => {
    const enforce = await render(MULTI);
    assert.equal(openbaoConfig(enforce).tenants?.namespacePodSecurityLabels, undefined, "enforce");
    assert.deepEqual(namespaceVerbs(enforce), ["get", "list", "watch", "patch"]);
    const enforcing = named(enforce, "ValidatingAdmissionPolicy", NS_POLICY);
    assert.equal(
      enforcing.spec.matchConditions[0].expression,
      'request.userInfo.username == "system:serviceaccount:ops:po-openbao"',
    );
    assert.deepEqual(
      enforcing.spec.validations.map((v: Obj) => v.expression.split(" ")[0]),
      ["!variables.denied", "object.spec"],
    );
    assert.equal(named(enforce, "ValidatingAdmissionPolicyBinding", NS_POLICY).spec.policyName, NS_POLICY);

    const external = await render([...MULTI, "--set=tenancy.namespacePodSecurityLabels.mode=external"]);
    assert.equal(openbaoConfig(external).tenants?.namespacePodSecurityLabels, "external");
    assert.deepEqual(namespaceVerbs(external), ["get", "list", "watch"], "no patch, no update");
    const refusing = named(external, "ValidatingAdmissionPolicy", NS_POLICY);
    assert.deepEqual(
      refusing.spec.validations.map((v: Obj) => v.expression),
      ["false"],
    );
    assert.match(refusing.spec.validations[0].message, /external/);
    // Single mode provisions nothing: no policy, whatever the mode says.
    const single = await render([
      ...ALL_TARGETS,
      "--set=admissionPolicies.enabled=true",
      "--set=tenancy.namespacePodSecurityLabels.mode=external",
    ]);
    assert.equal(
      ofKind(single, "ValidatingAdmissionPolicy").filter((p) => p.metadata.name === NS_POLICY).length,
      0,
    );
    assert.match(
      await renderFails([...MULTI, "--set=tenancy.namespacePodSecurityLabels.mode=rancher"]),
      /namespacePodSecurityLabels/,
    );
  });

  it("admissionPolicies.provisionerRBAC: upstream's denied namespaces and prefixes reach the operator (trimmed, blanks dropped) and the namespace policy; maintenanceBreakGlassGroups is accepted and changes nothing", async () => {
    const plain = await render(MULTI);
    assert.deepEqual(openbaoConfig(plain).tenants?.denied, DEFAULT_DENIED_NAMESPACES);
    const denied = (objs: Obj[]) =>
      named(objs, "ValidatingAdmissionPolicy", NS_POLICY).spec.variables.find((v: Obj) => v.name === "denied")
        .expression as string;
    assert.equal(
      denied(plain),
      'request.name in ["ops","openshift"] || ["kube-","openshift-","gke-","eks-","aws-","aks-","azure-"].exists(p, request.name.startsWith(p))',
    );
    const custom = await render([
      ...MULTI,
      '--set-json=admissionPolicies.provisionerRBAC={"deniedNamespaces":[" platform ",""],"deniedNamespacePrefixes":["corp-"]}',
    ]);
    assert.deepEqual(openbaoConfig(custom).tenants?.denied, { names: ["platform"], prefixes: ["corp-"] });
    assert.equal(
      denied(custom),
      'request.name in ["ops","platform"] || ["kube-","corp-"].exists(p, request.name.startsWith(p))',
    );
    const none = await render([
      ...MULTI,
      '--set-json=admissionPolicies.provisionerRBAC={"deniedNamespaces":[],"deniedNamespacePrefixes":[]}',
    ]);
    assert.deepEqual(openbaoConfig(none).tenants?.denied, { names: [], prefixes: [] });
    // A name that cannot be a namespace: the operator refuses it at start, naming the field.
    const bad = await render([
      ...MULTI,
      '--set-json=admissionPolicies.provisionerRBAC.deniedNamespaces=["Bad_Name"]',
    ]);
    assert.throws(() => openbaoConfig(bad), /targets\.openbao\.tenants\.deniedNamespaces\[0\]/);
    // Upstream's deprecated no-op: the same configuration, RBAC and policies with or without it
    // (the chart's generated certificates differ between any two renders).
    const kept = (objs: Obj[]) =>
      objs.filter((o) =>
        [
          "ConfigMap",
          "ClusterRole",
          "Role",
          "ValidatingAdmissionPolicy",
          "ValidatingAdmissionPolicyBinding",
        ].includes(o.kind),
      );
    const withGroups = await render([
      ...MULTI,
      `--set-json=admissionPolicies.maintenanceBreakGlassGroups=["ops"]`,
    ]);
    assert.deepEqual(kept(withGroups), kept(plain));
    assert.match(
      await renderFails([...MULTI, "--set=admissionPolicies.provisionerRBAC.deniedPrefixes={x}"]),
      /deniedPrefixes/,
    );
  });

  it("serviceAccountToken: openBaoAudience reaches the openbao target; kubernetesAudience sets the operator's API token audience", async () => {
    const plain = await render(ALL_TARGETS);
    assert.equal(openbaoConfig(plain).openBaoAudience, "openbao-internal");
    const apiToken = (objs: Obj[]) =>
      deployments(objs).map(
        (d) =>
          (podOf(d).volumes as Obj[]).find((v) => v.name === "kube-api-access")!.projected.sources[0]
            .serviceAccountToken,
      );
    for (const t of apiToken(plain)) assert.deepEqual(t, { path: "token", expirationSeconds: 3607 });
    const set = await render([
      ...ALL_TARGETS,
      "--set=serviceAccountToken.openBaoAudience=corp-bao",
      "--set=serviceAccountToken.kubernetesAudience=https://kubernetes.default.svc",
    ]);
    assert.equal(openbaoConfig(set).openBaoAudience, "corp-bao");
    for (const t of apiToken(set))
      assert.deepEqual(t, {
        path: "token",
        expirationSeconds: 3607,
        audience: "https://kubernetes.default.svc",
      });
    // The target's own key wins over the chart's value.
    const own = await render([...ALL_TARGETS, "--set=targets.openbao.config.openBaoAudience=own"]);
    assert.equal(openbaoConfig(own).openBaoAudience, "own");
    assert.match(await renderFails(["--set=serviceAccountToken.openBaoAudience=a b"]), /openBaoAudience/);
    // Empty (a values file that blanks it): the operator's default, as unset.
    const blank = await render([...ALL_TARGETS, "--set=serviceAccountToken.openBaoAudience="]);
    assert.equal(openbaoConfig(blank).openBaoAudience, "openbao-internal");
  });

  it("networkPolicy.metricsAllowedNamespaceLabels: the metrics port only from those namespaces, probes still open", async () => {
    const objs = await render([
      "--set=networkPolicy.enabled=true",
      "--set=networkPolicy.metricsAllowedNamespaceLabels.metrics=enabled",
    ]);
    const [np] = ofKind(objs, "NetworkPolicy");
    assert.deepEqual(np!.spec.ingress, [
      { ports: [{ port: 8081, protocol: "TCP" }] },
      {
        ports: [{ port: 8443, protocol: "TCP" }],
        from: [{ namespaceSelector: { matchLabels: { metrics: "enabled" } } }],
      },
    ]);
    const open = ofKind(await render(["--set=networkPolicy.enabled=true"]), "NetworkPolicy")[0]!;
    assert.equal(open.spec.ingress[1].from, undefined, "no labels: from anywhere, as before");
  });

  it("monitoring.labels: merged into the PodMonitor's and PrometheusRule's labels; one the chart sets is refused", async () => {
    const objs = await render([...MONITORING_KINDS, "--set=monitoring.labels.release=prometheus"]);
    for (const kind of ["PodMonitor", "PrometheusRule"])
      assert.equal(ofKind(objs, kind)[0]!.metadata.labels.release, "prometheus", kind);
    assert.match(
      await renderFails([...MONITORING_KINDS, "--set=monitoring.labels.app\\.kubernetes\\.io/name=x"]),
      /monitoring\.labels\.app\.kubernetes\.io\/name: the chart sets this key itself/,
    );
  });

  // Upstream's scrape values (metrics.serviceMonitor, metrics.victoriaMetrics, metrics.rbac).
  const PROCS = ["po-gitlab", "po-openbao", "po-vault"];
  const SECURE_ENDPOINT = {
    port: "metrics",
    path: "/metrics",
    interval: "30s",
    scrapeTimeout: "10s",
    scheme: "https",
    bearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
    tlsConfig: { insecureSkipVerify: true },
  };
  const names = (objs: Obj[], kind: string) => ofKind(objs, kind).map((o) => o.metadata.name as string);
  /** Each scrape object selects exactly its process's metrics Service and scrapes its port. */
  function assertSelectsItsService(objs: Obj[], kind: string): void {
    for (const o of ofKind(objs, kind)) {
      const service = named(objs, "Service", o.metadata.name);
      for (const [k, v] of Object.entries(o.spec.selector.matchLabels))
        assert.equal(service.metadata.labels[k], v, `${kind} ${o.metadata.name} selects its Service by ${k}`);
      const others = ofKind(objs, "Service").filter(
        (s) =>
          s.metadata.name.endsWith("-metrics") &&
          s !== service &&
          Object.entries(o.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels[k] === v),
      );
      assert.deepEqual(others, [], `${kind} ${o.metadata.name} selects no other process's Service`);
      assert.deepEqual(o.spec.namespaceSelector, { matchNames: [service.metadata.namespace] });
      assert.ok(
        service.spec.ports.some((p: Obj) => p.name === o.spec.endpoints[0].port),
        "the endpoint names the Service's port",
      );
      // job="platform-operator", which the alert rules and the dashboard select on.
      assert.equal(o.spec.jobLabel, "app.kubernetes.io/name");
      assert.equal(service.metadata.labels[o.spec.jobLabel], "platform-operator");
    }
  }

  it("metrics.serviceMonitor: a ServiceMonitor per process's metrics Service, with or without the kind served, instead of the PodMonitor", async () => {
    const plain = await render([...ALL_TARGETS, ...MONITORING_KINDS, ...SCRAPE_KINDS]);
    assert.deepEqual(names(plain, "ServiceMonitor"), [], "off by default");
    assert.equal(ofKind(plain, "PodMonitor").length, 3);
    const on = await render([
      ...ALL_TARGETS,
      ...MONITORING_KINDS,
      ...SCRAPE_KINDS,
      "--set=metrics.serviceMonitor.enabled=true",
    ]);
    assert.deepEqual(
      names(on, "ServiceMonitor").sort(),
      PROCS.map((p) => `${p}-metrics`),
    );
    assertSelectsItsService(on, "ServiceMonitor");
    for (const sm of ofKind(on, "ServiceMonitor")) {
      assert.equal(sm.apiVersion, "monitoring.coreos.com/v1");
      assert.equal(sm.metadata.namespace, "ops");
      assert.deepEqual(sm.spec.endpoints, [SECURE_ENDPOINT]);
    }
    // It replaces the PodMonitor and the PodMonitor's scrape ServiceAccount; the alert rules stay.
    assert.deepEqual(names(on, "PodMonitor"), []);
    assert.ok(!names(on, "ServiceAccount").some((n) => n.endsWith("-scrape")));
    assert.equal(ofKind(on, "PrometheusRule").length, 3);
    // Rendered where the cluster does not serve the kind too (upstream's behaviour): the install
    // then fails on the kind rather than leaving the pods unscraped without a word.
    const unserved = await render([...ALL_TARGETS, "--set=metrics.serviceMonitor.enabled=true"]);
    assert.deepEqual(ofKind(unserved, "ServiceMonitor"), ofKind(on, "ServiceMonitor"));
    // One process for every target: one ServiceMonitor.
    const one = await render([
      ...ALL_TARGETS,
      "--set=metrics.serviceMonitor.enabled=true",
      '--set-json=deployments={"all":["vault","openbao","gitlab"]}',
    ]);
    assert.deepEqual(names(one, "ServiceMonitor"), ["po-all-metrics"]);
    assertSelectsItsService(one, "ServiceMonitor");
    // metrics.enabled false: nothing to scrape, so none.
    const off = await render([
      ...SCRAPE_KINDS,
      "--set=metrics.serviceMonitor.enabled=true",
      "--set=metrics.enabled=false",
    ]);
    assert.deepEqual(names(off, "ServiceMonitor"), []);
  });

  it("metrics.serviceMonitor.*: namespace, interval, scrapeTimeout, labels and every tlsConfig value land in the ServiceMonitor", async () => {
    const objs = await render([
      ...SCRAPE_KINDS,
      "--set=metrics.serviceMonitor.enabled=true",
      "--set=metrics.serviceMonitor.namespace=monitoring",
      "--set=metrics.serviceMonitor.interval=1m",
      "--set=metrics.serviceMonitor.scrapeTimeout=1m",
      "--set=metrics.serviceMonitor.labels.release=prometheus",
      "--set=metrics.serviceMonitor.tlsConfig.insecureSkipVerify=false",
      "--set=metrics.serviceMonitor.tlsConfig.serverName=po-vault-metrics.ops.svc",
      "--set=metrics.serviceMonitor.tlsConfig.caSecret.name=metrics-ca",
      "--set=metrics.serviceMonitor.tlsConfig.certSecret.name=scraper",
      "--set=metrics.serviceMonitor.tlsConfig.certSecret.key=client.crt",
      "--set=metrics.serviceMonitor.tlsConfig.keySecret.name=scraper",
    ]);
    const sm = named(objs, "ServiceMonitor", "po-vault-metrics");
    assert.equal(sm.metadata.namespace, "monitoring");
    // The Service stays in the release's namespace, which the selector names.
    assert.deepEqual(sm.spec.namespaceSelector, { matchNames: ["ops"] });
    assert.equal(sm.metadata.labels.release, "prometheus");
    assert.equal(sm.metadata.labels["app.kubernetes.io/component"], "vault");
    assert.deepEqual(sm.spec.endpoints, [
      {
        ...SECURE_ENDPOINT,
        interval: "1m",
        scrapeTimeout: "1m",
        tlsConfig: {
          insecureSkipVerify: false,
          serverName: "po-vault-metrics.ops.svc",
          ca: { secret: { name: "metrics-ca", key: "ca.crt" } },
          cert: { secret: { name: "scraper", key: "client.crt" } },
          keySecret: { name: "scraper", key: "tls.key" },
        },
      },
    ]);
    // metrics.secure false: plain HTTP, and no token sent in clear.
    const plain = await render(["--set=metrics.serviceMonitor.enabled=true", "--set=metrics.secure=false"]);
    assert.deepEqual(named(plain, "ServiceMonitor", "po-vault-metrics").spec.endpoints, [
      { port: "metrics", path: "/metrics", interval: "30s", scrapeTimeout: "10s", scheme: "http" },
    ]);
    // Refused, naming the value.
    const on = "--set=metrics.serviceMonitor.enabled=true";
    const refused: [string[], RegExp][] = [
      [
        [on, "--set=metrics.serviceMonitor.labels.app\\.kubernetes\\.io/component=x"],
        /metrics\.serviceMonitor\.labels\.app\.kubernetes\.io\/component: the chart sets this key itself \(to "vault"\)/,
      ],
      [[on, "--set=metrics.serviceMonitor.labels.team=not a label value"], /metrics\/serviceMonitor\/labels/],
      [
        [on, "--set=metrics.serviceMonitor.scrapeTimeout=31s"],
        /metrics\.serviceMonitor\.scrapeTimeout: 31s is longer than metrics\.serviceMonitor\.interval \(30s\)/,
      ],
      [["--set=metrics.serviceMonitor.interval=30"], /metrics\/serviceMonitor\/interval/],
      [["--set=metrics.serviceMonitor.interval=half a minute"], /metrics\/serviceMonitor\/interval/],
      [["--set=metrics.serviceMonitor.namespace=Monitoring"], /metrics\/serviceMonitor\/namespace/],
      [
        ["--set=metrics.serviceMonitor.tlsConfig.insecureSkipVerify=maybe"],
        /metrics\/serviceMonitor\/tlsConfig\/insecureSkipVerify/,
      ],
      [
        ["--set=metrics.serviceMonitor.tlsConfig.caSecret.file=/ca"],
        /metrics\/serviceMonitor\/tlsConfig\/caSecret/,
      ],
      [["--set=metrics.serviceMonitor.port=https"], /metrics\/serviceMonitor.*'port' not allowed/],
    ];
    for (const [args, message] of refused) assert.match(await renderFails(args), message, args.join(" "));
    // The same duration written two ways is no timeout longer than the interval.
    const equal = await render([
      on,
      "--set=metrics.serviceMonitor.scrapeTimeout=1m30s",
      "--set=metrics.serviceMonitor.interval=90s",
    ]);
    assert.equal(named(equal, "ServiceMonitor", "po-vault-metrics").spec.endpoints[0].scrapeTimeout, "1m30s");
  });

  it("metrics.victoriaMetrics: a VMServiceScrape per process's metrics Service, with its values; instead of the PodMonitor", async () => {
    const plain = await render([...MONITORING_KINDS, ...SCRAPE_KINDS]);
    assert.deepEqual(names(plain, "VMServiceScrape"), [], "off by default");
    const on = await render([
      ...ALL_TARGETS,
      ...MONITORING_KINDS,
      ...SCRAPE_KINDS,
      "--set=metrics.victoriaMetrics.enabled=true",
    ]);
    assert.deepEqual(
      names(on, "VMServiceScrape").sort(),
      PROCS.map((p) => `${p}-metrics`),
    );
    assertSelectsItsService(on, "VMServiceScrape");
    for (const s of ofKind(on, "VMServiceScrape")) {
      assert.equal(s.apiVersion, "operator.victoriametrics.com/v1beta1");
      assert.equal(s.metadata.namespace, "ops");
      assert.deepEqual(s.spec.endpoints, [SECURE_ENDPOINT]);
    }
    assert.deepEqual(names(on, "PodMonitor"), []);
    assert.deepEqual(names(on, "ServiceMonitor"), [], "the ServiceMonitor is a value of its own");
    const unserved = await render([...ALL_TARGETS, "--set=metrics.victoriaMetrics.enabled=true"]);
    assert.deepEqual(ofKind(unserved, "VMServiceScrape"), ofKind(on, "VMServiceScrape"));
    const set = await render([
      "--set=metrics.victoriaMetrics.enabled=true",
      "--set=metrics.victoriaMetrics.namespace=vm",
      "--set=metrics.victoriaMetrics.interval=15s",
      "--set=metrics.victoriaMetrics.scrapeTimeout=5s",
      "--set=metrics.victoriaMetrics.labels.tier=ops",
      "--set=metrics.victoriaMetrics.tlsConfig.insecureSkipVerify=false",
      "--set=metrics.victoriaMetrics.tlsConfig.serverName=po-vault-metrics.ops.svc",
    ]);
    const s = named(set, "VMServiceScrape", "po-vault-metrics");
    assert.equal(s.metadata.namespace, "vm");
    assert.deepEqual(s.spec.namespaceSelector, { matchNames: ["ops"] });
    assert.equal(s.metadata.labels.tier, "ops");
    assert.deepEqual(s.spec.endpoints, [
      {
        ...SECURE_ENDPOINT,
        interval: "15s",
        scrapeTimeout: "5s",
        tlsConfig: { insecureSkipVerify: false, serverName: "po-vault-metrics.ops.svc" },
      },
    ]);
    const insecure = await render([
      "--set=metrics.victoriaMetrics.enabled=true",
      "--set=metrics.secure=false",
    ]);
    assert.equal(named(insecure, "VMServiceScrape", "po-vault-metrics").spec.endpoints[0].scheme, "http");
    assert.equal(
      named(insecure, "VMServiceScrape", "po-vault-metrics").spec.endpoints[0].bearerTokenFile,
      undefined,
    );
    assert.deepEqual(
      names(
        await render(["--set=metrics.victoriaMetrics.enabled=true", "--set=metrics.enabled=false"]),
        "VMServiceScrape",
      ),
      [],
    );
    const on1 = "--set=metrics.victoriaMetrics.enabled=true";
    assert.match(
      await renderFails([on1, "--set=metrics.victoriaMetrics.labels.app\\.kubernetes\\.io/name=x"]),
      /metrics\.victoriaMetrics\.labels\.app\.kubernetes\.io\/name: the chart sets this key itself/,
    );
    assert.match(
      await renderFails([on1, "--set=metrics.victoriaMetrics.interval=5s"]),
      /metrics\.victoriaMetrics\.scrapeTimeout: 10s is longer than metrics\.victoriaMetrics\.interval \(5s\)/,
    );
    // Upstream's VMServiceScrape takes no Secrets; neither does this one.
    assert.match(
      await renderFails(["--set=metrics.victoriaMetrics.tlsConfig.caSecret.name=ca"]),
      /metrics\/victoriaMetrics\/tlsConfig.*'caSecret' not allowed/,
    );
    assert.match(
      await renderFails(["--set=metrics.victoriaMetrics.scrapeTimeout=soon"]),
      /metrics\/victoriaMetrics\/scrapeTimeout/,
    );
  });

  it("metrics.rbac: a ClusterRole allowing only GET /metrics, bound to the given ServiceAccounts; at least one", async () => {
    assert.ok(
      !names(await render([]), "ClusterRoleBinding").includes("ops-po-metrics-reader"),
      "off by default",
    );
    const objs = await render([
      "--set=metrics.rbac.enabled=true",
      '--set-json=metrics.rbac.subjects=[{"name":"prometheus-k8s","namespace":"monitoring"},{"name":"vmagent","namespace":"vm"}]',
    ]);
    assert.deepEqual(named(objs, "ClusterRole", "ops-po-metrics-reader").rules, [
      { nonResourceURLs: ["/metrics"], verbs: ["get"] },
    ]);
    const binding = named(objs, "ClusterRoleBinding", "ops-po-metrics-reader");
    assert.deepEqual(binding.roleRef, {
      apiGroup: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      name: "ops-po-metrics-reader",
    });
    assert.deepEqual(binding.subjects, [
      { kind: "ServiceAccount", name: "prometheus-k8s", namespace: "monitoring" },
      { kind: "ServiceAccount", name: "vmagent", namespace: "vm" },
    ]);
    // Nothing to read when /metrics is off.
    const off = await render([
      "--set=metrics.rbac.enabled=true",
      '--set-json=metrics.rbac.subjects=[{"name":"p","namespace":"m"}]',
      "--set=metrics.enabled=false",
    ]);
    assert.ok(!names(off, "ClusterRole").includes("ops-po-metrics-reader"));
    assert.match(
      await renderFails(["--set=metrics.rbac.enabled=true"]),
      /metrics\.rbac\.subjects: list at least one ServiceAccount/,
    );
    assert.match(
      await renderFails(['--set-json=metrics.rbac.subjects=[{"name":"prometheus"}]']),
      /metrics\/rbac\/subjects\/0.*namespace/,
    );
    assert.match(
      await renderFails(['--set-json=metrics.rbac.subjects=[{"name":"p","namespace":"m","kind":"User"}]']),
      /metrics\/rbac\/subjects\/0.*'kind' not allowed/,
    );
    assert.match(await renderFails(["--set=metrics.rbac.enabled=yes"]), /metrics\/rbac\/enabled/);
  });
});
