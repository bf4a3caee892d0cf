import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  deriveWaitJob,
  OPERATOR_WAIT_JOB,
  WAIT_SCRIPT,
  type WaitJobSource,
  waitJobName,
} from "../../src/targets/gitlab/migrations/wait-job.js";
import { type MigrationsJob, roleOf } from "../../src/targets/gitlab/status/migrations.js";

// The wait Job the operator provides for a chart too old to render one: derived from the chart's
// migrations Job, and its poll loop run against a stand-in gitlab-rails.

const BATCHED = "gitlab.com/batched-background-migrations-check";
const TARGET = "gitlab.com/target-version";
const RELEASE = { "operator.gitlab.com/release-name": "gl", "operator.gitlab.com/release-namespace": "ns" };

/** The real chart's migrations Job as the API server returns it (extra container first, args only). */
const migrations = (): WaitJobSource => ({
  metadata: {
    name: "gl-migrations-1a2b3c",
    labels: { app: "migrations", release: "gl", ...RELEASE, [TARGET]: "18.4.1" },
  },
  spec: {
    activeDeadlineSeconds: 3600,
    backoffLimit: 6,
    selector: { matchLabels: { "batch.kubernetes.io/controller-uid": "u-1" } },
    template: {
      metadata: {
        labels: {
          app: "migrations",
          "batch.kubernetes.io/controller-uid": "u-1",
          "controller-uid": "u-1",
          "job-name": "gl-migrations-1a2b3c",
        },
      },
      spec: {
        restartPolicy: "OnFailure",
        initContainers: [{ name: "configure", command: ["sh", "/config/configure"] }],
        containers: [
          { name: "sidecar", image: "proxy:1", args: ["run"] },
          {
            name: "migrations",
            image: "registry.gitlab.com/gitlab-org/build/cng/gitlab-toolbox-ee:v18.4.1",
            args: ["/bin/bash", "-c", "/scripts/wait-for-deps /scripts/db-migrate"],
            env: [{ name: "CONFIG_DIRECTORY", value: "/srv/gitlab/config" }],
          },
        ],
      },
    },
  },
});

describe("the operator's wait Job", () => {
  it("is the migrations Job's pod with the poll loop as args, labelled as the wait Job of that version", () => {
    const source = migrations();
    const before = structuredClone(source);
    const job = deriveWaitJob(source, {
      namespace: "ns",
      release: "gl",
      gitlabVersion: "18.4.1",
      releaseLabels: RELEASE,
    });
    assert.deepEqual(source, before, "the migrations Job is not changed");
    assert.equal(job.metadata.name, "gl-bbm-wait-18-4-1");
    assert.equal(job.metadata.namespace, "ns");
    assert.deepEqual(job.metadata.labels, {
      app: "migrations",
      release: "gl",
      ...RELEASE,
      [TARGET]: "18.4.1",
      [BATCHED]: OPERATOR_WAIT_JOB,
    });
    assert.equal(roleOf(job as MigrationsJob), "batched", "never taken for the migrations Job");
    const spec = job["spec"] as Required<NonNullable<WaitJobSource["spec"]>>;
    assert.equal(
      spec["activeDeadlineSeconds"],
      undefined,
      "no deadline: the wait may outlast the migrations'",
    );
    assert.equal(spec["selector"], undefined, "the API server generates a selector of its own");
    assert.equal(spec["backoffLimit"], 6);
    const pod = spec.template.spec!;
    const [sidecar, main] = pod.containers!;
    assert.deepEqual(
      sidecar,
      { name: "sidecar", image: "proxy:1", args: ["run"] },
      "other containers as they were",
    );
    assert.equal(main!.image, "registry.gitlab.com/gitlab-org/build/cng/gitlab-toolbox-ee:v18.4.1");
    assert.deepEqual(main!.args, ["/bin/bash", "-c", WAIT_SCRIPT]);
    assert.deepEqual(main!["env"], [{ name: "CONFIG_DIRECTORY", value: "/srv/gitlab/config" }]);
    assert.deepEqual(pod["initContainers"], [{ name: "configure", command: ["sh", "/config/configure"] }]);
    assert.deepEqual(spec.template.metadata!["labels"], { app: "migrations", [BATCHED]: OPERATOR_WAIT_JOB });
  });

  it("is named within 63 characters", () => {
    const name = waitJobName("a".repeat(60), "18.4.1+ee.0");
    assert.ok(name.length <= 63 && !name.endsWith("-"), name);
    assert.equal(waitJobName("gl", "19.0.0-rc1+ee"), "gl-bbm-wait-19-0-0-rc1-ee");
  });
});

describe("the wait Job's poll loop (bash, with a stand-in gitlab-rails)", () => {
  const dir = mkdtempSync(join(tmpdir(), "bbm-wait-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the loop; gitlab-rails answers each check with the next line of `answers` ("fail" fails it). */
  function run(answers: string[], env: Record<string, string> = {}) {
    const state = join(dir, `n-${Math.random().toString(36).slice(2)}`);
    writeFileSync(state, "0");
    writeFileSync(join(dir, "answers"), `${answers.join("\n")}\n`);
    const fake = join(dir, "gitlab-rails");
    writeFileSync(
      fake,
      `#!/bin/bash\nn=$(cat "${state}"); echo $((n + 1)) > "${state}"\nline=$(sed -n "$((n + 1))p" "${dir}/answers")\n` +
        `[ "$line" = fail ] && { echo "PG::ConnectionBad" >&2; exit 1; }\necho "some rails warning"\necho "$line"\n`,
    );
    chmodSync(fake, 0o755);
    const r = spawnSync("/bin/bash", ["-c", WAIT_SCRIPT], {
      env: { PATH: `${dir}:/usr/bin:/bin`, BATCHED_MIGRATIONS_WAIT_INTERVAL_SECONDS: "0", ...env },
      encoding: "utf8",
      timeout: 30_000,
    });
    return { status: r.status, out: r.stdout };
  }

  it("ends successfully once nothing is pending, after waiting while something is", () => {
    const r = run(["2 0", "1 0", "0 0"]);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /2 batched background migration\(s\) pending\n1 batched/);
    assert.match(r.out, /no batched background migrations pending\n$/);
  });

  it("retries a failed check, and a run of failures ends it failed", () => {
    const recovered = run(["fail", "fail", "0 0"], { BATCHED_MIGRATIONS_WAIT_MAX_FAILURES: "3" });
    assert.equal(recovered.status, 0, recovered.out);
    assert.match(recovered.out, /check failed \(2 of 3 in a row\)/);
    const ended = run(["fail", "fail", "fail", "0 0"], { BATCHED_MIGRATIONS_WAIT_MAX_FAILURES: "3" });
    assert.equal(ended.status, 1, ended.out);
    assert.match(ended.out, /check failed \(3 of 3 in a row\)\n$/);
  });

  it("a failed migration ends it failed: no wait clears one", () => {
    const r = run(["1 0", "0 1"]);
    assert.equal(r.status, 1);
    assert.match(r.out, /1 batched background migration\(s\) failed/);
  });
});
