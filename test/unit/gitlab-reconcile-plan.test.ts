import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GitLabReleaseNameLabel, GitLabReleaseNamespaceLabel } from "../../src/apis/gitlabcore.js";
import { excludedReason, kindsOf, planApply, releaseSelector } from "../../src/targets/gitlab/apply/plan.js";
import {
  parseKindKey,
  type RenderedHook,
  type RenderedObject,
} from "../../src/targets/gitlab/apply/rendered.js";
import {
  deletionsAfterFailure,
  deletionsAfterSuccess,
  hookEventFor,
  hooksDue,
  type PlannedHook,
  planHooks,
  postHookEventFor,
} from "../../src/targets/gitlab/hooks/plan.js";
import { inventoryKinds } from "../../src/targets/gitlab/prune/index.js";
import { gitlabVersionOf, migrationsState } from "../../src/targets/gitlab/status/version.js";
import { workloadReadiness } from "../../src/targets/gitlab/status/workloads.js";
import { defaultVersionPolicy } from "../../src/targets/gitlab/wiring.js";

const obj = (
  apiVersion: string,
  kind: string,
  name: string,
  extra: Record<string, unknown> = {},
): RenderedObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace: "gl" },
  ...extra,
});
const hook = (
  o: RenderedObject,
  weight: number,
  events = ["pre-install"],
  deletePolicies: string[] = [],
): RenderedHook => ({
  object: o,
  events,
  weight,
  deletePolicies,
});
const release = { name: "gitlab", namespace: "gl" };

describe("gitlab apply plan", () => {
  it("never applies definitions nor anything in rbac.authorization.k8s.io", () => {
    const plan = planApply(
      [
        obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com"),
        obj("rbac.authorization.k8s.io/v1", "Role", "r"),
        obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "crb"),
        obj("v1", "ConfigMap", "cm"),
      ],
      release,
    );
    assert.deepEqual(
      plan.objects.map((o) => o.kind),
      ["ConfigMap"],
    );
    assert.deepEqual(
      plan.excluded.map((e) => e.reason),
      ["CustomResourceDefinition", "RBAC", "RBAC"],
    );
    // A kind named like a definition in another group is not one.
    assert.equal(
      excludedReason({ apiVersion: "example.com/v1", kind: "CustomResourceDefinition" }),
      undefined,
    );
  });

  it("stamps the release labels over the chart's own and orders objects for install", () => {
    const input = [
      obj("apps/v1", "Deployment", "web", {
        metadata: { name: "web", labels: { app: "web", [GitLabReleaseNameLabel]: "spoof" } },
      }),
      obj("v1", "Service", "web"),
      obj("v1", "ConfigMap", "cfg"),
      obj("gateway.networking.k8s.io/v1", "HTTPRoute", "route"),
      obj("v1", "ServiceAccount", "sa"),
    ];
    const plan = planApply(input, release);
    assert.deepEqual(
      plan.objects.map((o) => o.kind),
      ["ServiceAccount", "ConfigMap", "Service", "Deployment", "HTTPRoute"],
    );
    const web = plan.objects.find((o) => o.kind === "Deployment")!;
    assert.equal(web.metadata.labels?.["app"], "web");
    assert.equal(web.metadata.labels?.[GitLabReleaseNameLabel], "gitlab");
    assert.equal(web.metadata.labels?.[GitLabReleaseNamespaceLabel], "gl");
    assert.equal(input[0]!.metadata.labels?.[GitLabReleaseNameLabel], "spoof", "the input is not changed");
    assert.equal(
      releaseSelector(release),
      `${GitLabReleaseNameLabel}=gitlab,${GitLabReleaseNamespaceLabel}=gl`,
    );
  });

  it("records kinds as <apiVersion>/<Kind>, sorted and unique, and reads them back", () => {
    const kinds = kindsOf([
      obj("v1", "ConfigMap", "a"),
      obj("apps/v1", "Deployment", "b"),
      obj("v1", "ConfigMap", "c"),
    ]);
    assert.deepEqual(kinds, ["apps/v1/Deployment", "v1/ConfigMap"]);
    assert.deepEqual(parseKindKey("gateway.networking.k8s.io/v1/HTTPRoute"), {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
    });
    assert.equal(parseKindKey("nonsense"), undefined);
    assert.equal(parseKindKey("v1/"), undefined);
    assert.deepEqual(inventoryKinds(["v1/ConfigMap", "v1/ConfigMap", "bad", "apps/v1/Deployment"]), [
      { apiVersion: "v1", kind: "ConfigMap" },
      { apiVersion: "apps/v1", kind: "Deployment" },
    ]);
  });
});

describe("gitlab hook plan", () => {
  it("runs one event's hooks by weight, then name, then kind (Helm's order); RBAC never", () => {
    const hooks = [
      hook(obj("batch/v1", "Job", "migrations"), 5, ["pre-upgrade"]),
      hook(
        obj("batch/v1", "Job", "shared-secrets"),
        -5,
        ["pre-install", "pre-upgrade"],
        ["before-hook-creation", "hook-succeeded"],
      ),
      hook(obj("v1", "ConfigMap", "shared-secrets-cfg"), -5),
      hook(obj("rbac.authorization.k8s.io/v1", "Role", "shared-secrets"), -10),
      hook(obj("v1", "ServiceAccount", "b"), 0),
      hook(obj("v1", "ServiceAccount", "a"), 0),
      hook(obj("batch/v1", "Job", "test-connection"), 0, ["test"]),
      hook(obj("batch/v1", "Job", "after"), 0, ["post-install"]),
    ];
    const plan = planHooks(hooks, "pre-upgrade");
    assert.deepEqual(
      plan.run.map((p) => p.hook.object.metadata.name),
      ["shared-secrets", "migrations"],
    );
    const install = planHooks(hooks, "pre-install");
    assert.deepEqual(
      install.run.map((p) => p.hook.object.metadata.name),
      // Helm compares names before kinds: the Job "shared-secrets" sorts before "shared-secrets-cfg".
      ["shared-secrets", "shared-secrets-cfg", "a", "b"],
    );
    assert.equal(hookEventFor(undefined), "pre-install");
    assert.equal(hookEventFor("10.3.0"), "pre-upgrade");
    // After the apply of the same release: post-install on a first install, post-upgrade after.
    assert.equal(postHookEventFor(undefined), "post-install");
    assert.equal(postHookEventFor("10.3.0"), "post-upgrade");
    assert.deepEqual(
      planHooks(hooks, postHookEventFor(undefined)).run.map((p) => p.hook.object.metadata.name),
      ["after"],
    );
    assert.deepEqual(planHooks(hooks, postHookEventFor("10.3.0")).run, [], "post-install only");
    assert.deepEqual(
      install.excluded.map((h) => h.object.kind),
      ["Role"],
    );
    assert.deepEqual(plan.run[0]!.deletePolicies, ["before-hook-creation", "hook-succeeded"]);
    assert.deepEqual(
      install.run[1]!.deletePolicies,
      ["before-hook-creation"],
      "Helm's default when none is given",
    );
  });

  it("sorts hooks of one weight and name by Helm's kind order, unknown kinds last and by name", () => {
    const names = planHooks(
      [
        hook(obj("batch/v1", "Job", "gl-shared-secrets"), -3),
        hook(obj("example.com/v1", "Widget", "gl-shared-secrets"), -3),
        hook(obj("example.com/v1", "Gadget", "gl-shared-secrets"), -3),
        hook(obj("v1", "ConfigMap", "gl-shared-secrets"), -3),
        hook(obj("v1", "ServiceAccount", "gl-shared-secrets"), -3),
        // Go compares bytes: "Z" (0x5a) before "a" (0x61), "-" (0x2d) before "."
        hook(obj("v1", "ConfigMap", "gl-a"), -3),
        hook(obj("v1", "ConfigMap", "gl-Z"), -3),
      ],
      "pre-install",
    ).run.map((p) => `${p.hook.object.kind} ${p.hook.object.metadata.name}`);
    assert.deepEqual(names, [
      "ConfigMap gl-Z",
      "ConfigMap gl-a",
      "ServiceAccount gl-shared-secrets",
      "ConfigMap gl-shared-secrets",
      "Job gl-shared-secrets",
      "Gadget gl-shared-secrets",
      "Widget gl-shared-secrets",
    ]);
  });

  it("keeps declared delete policies as Helm does; before-hook-creation only when none is declared", () => {
    const [unknown, none] = planHooks(
      [
        hook(obj("v1", "ConfigMap", "a"), 0, ["pre-install"], ["keep-me"]),
        hook(obj("v1", "ConfigMap", "b"), 0),
      ],
      "pre-install",
    ).run;
    assert.deepEqual(unknown!.deletePolicies, ["keep-me"], "an unknown policy is a policy: no default");
    assert.deepEqual(none!.deletePolicies, ["before-hook-creation"]);
  });

  // The real GitLab chart's shared-secrets event: ServiceAccount (-5), the script ConfigMap (-3), the
  // Job that mounts it (0), all hook-succeeded,before-hook-creation; the upgrade check's ConfigMap
  // (-11) keeps only before-hook-creation.
  const SS = ["hook-succeeded", "before-hook-creation"];
  const gitlabEvent = () =>
    planHooks(
      [
        hook(obj("batch/v1", "Job", "gl-shared-secrets"), 0, ["pre-upgrade"], SS),
        hook(obj("v1", "ConfigMap", "gl-shared-secrets"), -3, ["pre-upgrade"], SS),
        hook(obj("v1", "ServiceAccount", "gl-shared-secrets"), -5, ["pre-upgrade"], SS),
        hook(obj("v1", "ConfigMap", "gl-upgrade-check"), -11, ["pre-upgrade"], ["before-hook-creation"]),
        hook(obj("batch/v1", "Job", "gl-upgrade-check"), -10, ["pre-upgrade"], SS),
        hook(obj("v1", "ConfigMap", "gl-probe"), 1, ["pre-upgrade"], ["hook-failed"]),
        hook(obj("batch/v1", "Job", "gl-probe"), 1, ["pre-upgrade"], ["hook-failed"]),
        hook(obj("v1", "Pod", "gl-test-runner-x1y2z"), 0, ["test"], ["hook-succeeded", "hook-failed"]),
      ],
      "pre-upgrade",
    ).run;
  const named = (hs: readonly PlannedHook[]) =>
    hs.map((p) => `${p.hook.object.kind} ${p.hook.object.metadata.name}`);

  it("deletes hook-succeeded hooks only after every hook of the event succeeded, last first", () => {
    const run = gitlabEvent();
    assert.deepEqual(named(run), [
      "ConfigMap gl-upgrade-check",
      "Job gl-upgrade-check",
      "ServiceAccount gl-shared-secrets",
      "ConfigMap gl-shared-secrets",
      "Job gl-shared-secrets",
      "ConfigMap gl-probe",
      "Job gl-probe",
    ]);
    assert.deepEqual(named(deletionsAfterSuccess(run)), [
      "Job gl-shared-secrets",
      "ConfigMap gl-shared-secrets",
      "ServiceAccount gl-shared-secrets",
      "Job gl-upgrade-check",
    ]);
  });

  it("on a failure deletes the failed hook if it says hook-failed and the earlier hook-succeeded ones", () => {
    const run = gitlabEvent();
    // The probe Job (hook-failed) failed: it goes, and so do the hooks that succeeded and say
    // hook-succeeded; the probe ConfigMap (hook-failed, succeeded) and the upgrade-check ConfigMap stay.
    assert.deepEqual(named(deletionsAfterFailure(run, 6)), [
      "Job gl-probe",
      "Job gl-upgrade-check",
      "ServiceAccount gl-shared-secrets",
      "ConfigMap gl-shared-secrets",
      "Job gl-shared-secrets",
    ]);
    // The shared-secrets Job (no hook-failed) failed: it stays for inspection; what ran before it and
    // says hook-succeeded goes; the hooks after it never ran.
    assert.deepEqual(named(deletionsAfterFailure(run, 4)), [
      "Job gl-upgrade-check",
      "ServiceAccount gl-shared-secrets",
      "ConfigMap gl-shared-secrets",
    ]);
    assert.deepEqual(named(deletionsAfterFailure(run, 0)), []);
  });

  it("runs hooks once per release: again for a new generation, a new chart, or after a failed pass", () => {
    const init = (status: "True" | "False", g: number) => [
      {
        type: "Initialized",
        status,
        reason: "ChartRendered",
        message: "",
        observedGeneration: g,
        lastTransitionTime: "",
      },
    ];
    assert.equal(hooksDue(undefined, 1, "10.3.0"), true);
    assert.equal(hooksDue({ conditions: init("True", 1), hooksVersion: "10.3.0" }, 1, "10.3.0"), false);
    assert.equal(hooksDue({ conditions: init("True", 1), hooksVersion: "10.3.0" }, 2, "10.3.0"), true);
    assert.equal(hooksDue({ conditions: init("True", 1), hooksVersion: "10.2.1" }, 1, "10.3.0"), true);
    assert.equal(hooksDue({ conditions: init("False", 1), hooksVersion: "10.3.0" }, 1, "10.3.0"), true);
  });
});

describe("gitlab status inputs", () => {
  it("reads the GitLab version off the migrations Job label, else the chart's appVersion", () => {
    const chart = { name: "gitlab", version: "10.3.0", appVersion: "18.3.0", digest: "x" };
    const job = obj("batch/v1", "Job", "migrations", {
      metadata: { name: "migrations", labels: { "gitlab.com/target-version": "18.3.1" } },
    });
    assert.equal(gitlabVersionOf({ objects: [job], hooks: [], chart }), "18.3.1");
    assert.equal(gitlabVersionOf({ objects: [obj("batch/v1", "Job", "other")], hooks: [], chart }), "18.3.0");
  });

  it("judges Deployments and StatefulSets ready only when their controllers report every replica", () => {
    const dep = (status: Record<string, unknown>, generation = 1, replicas = 2) => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "gl", generation },
      spec: { replicas },
      status,
    });
    const full = { observedGeneration: 1, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };
    assert.deepEqual(workloadReadiness([dep(full)]).ready, ["Deployment gl/web"]);
    assert.match(workloadReadiness([dep(full, 2)]).notReady[0]!.why, /not seen the current spec/);
    assert.match(
      workloadReadiness([dep({ ...full, availableReplicas: 1 })]).notReady[0]!.why,
      /1\/2 replicas available/,
    );
    const sts = {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "gitaly", namespace: "gl", generation: 1 },
      spec: { replicas: 1 },
      status: {
        observedGeneration: 1,
        updatedReplicas: 1,
        readyReplicas: 1,
        currentRevision: "a",
        updateRevision: "b",
      },
    };
    assert.match(workloadReadiness([sts]).notReady[0]!.why, /rolling update/);
    assert.deepEqual(workloadReadiness([{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }]), {
      ready: [],
      notReady: [],
    });
  });

  it("sums up migrations Jobs: failed wins, then running, complete only when all are", () => {
    const j = (t?: string) => ({ status: { conditions: t ? [{ type: t, status: "True" }] : [] } });
    assert.equal(migrationsState([]), "none");
    assert.equal(migrationsState([j("Complete")]), "complete");
    assert.equal(migrationsState([j("Complete"), j()]), "running");
    assert.equal(migrationsState([j(), j("Failed")]), "failed");
  });
});

describe("gitlab version policy glue", () => {
  const available = ["9.11.2", "10.2.1", "10.3.0", "10.3.4", "10.4.0", "11.0.0"];
  it("refuses a downgrade and steps one minor at a time, newest patch of each", () => {
    const r = defaultVersionPolicy.resolve({
      spec: { type: "Static", version: "10.2.1" },
      available,
      deployed: "10.3.0",
    });
    assert.ok("error" in r && /downgrade/.test(r.error));
    const p = defaultVersionPolicy.path("10.2.1", "11.0.0", available);
    assert.deepEqual(p, { steps: ["10.3.4", "10.4.0", "11.0.0"] });
  });
});
