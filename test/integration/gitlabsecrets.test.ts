import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { GitLabSecrets } from "../../src/apis/gitlabsecrets.js";
import { GitLabSecretsReason } from "../../src/apis/gitlabsecrets-names.js";
import { SECRET } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { isInvalid, isNotFound } from "../../src/runtime/errors.js";
import type { KubeObject } from "../../src/runtime/types.js";
import type { Rendered } from "../../src/targets/gitlab/apply/rendered.js";
import type { ReleaseSource } from "../../src/targets/gitlab/reconciler.js";
import { GITLABSECRETS } from "../../src/targets/gitlab/secrets/wiring.js";
import { GITLABCORE } from "../../src/targets/gitlab/target.js";
import { type ControlPlane, startControlPlane } from "../../src/testenv/controlplane.js";
import {
  applyGitLab,
  gitlabCore,
  installGitLabCrds,
  type RunningGitLab,
  startGitLabTarget,
  waitForGitLab,
} from "../support/gitlab.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";
import { LeakSearch } from "../support/leak-search.js";

// GitLabSecrets on the real API server, reconciled by the gitlab target: missing Secrets and keys
// are generated, nothing that exists is ever changed, a restart writes nothing, and the Secrets
// outlive the resource (GitLab's contract: no owner reference, so deleting it cannot take
// db_key_base with it). Then a GitLabCore whose render holds a GitLabSecrets, as the chart renders
// one with shared-secrets.provider: controller: applied and owned like the release's other objects.
// The shared API server runs no garbage collector, so this file starts its own control plane with
// kube-controller-manager's.

type SecretObj = KubeObject & { type?: string; data?: Record<string, string> };

/** What the chart renders with shared-secrets.provider: controller (one entry kept), for release "core". */
const render = (ns: string): Rendered => ({
  chart: { name: "gitlab", version: "1.0.0", appVersion: "17.0.0", digest: "fixed" },
  objects: [
    {
      apiVersion: "apps.gitlab.com/v2alpha1",
      kind: "GitLabSecrets",
      metadata: { name: "core", namespace: ns, labels: { app: "gitlab", release: "core" } },
      spec: {
        secrets: [
          {
            name: "core-gitlab-shell-secret",
            type: "Opaque",
            generators: [{ type: "random", key: "secret", charset: "alphanumeric", length: 64 }],
          },
        ],
      },
    },
  ],
  hooks: [],
});

const WAIT_MS = 60_000;
const labels = { app: "gitlab", release: "gl", "app.kubernetes.io/managed-by": "Helm" };

describe("GitLabSecrets: fill-missing on the real API server", () => {
  let cp: ControlPlane;
  let client: KubeClient;
  let ns: string;
  let op: RunningGitLab | undefined;

  const source = (): ReleaseSource => ({
    capabilities: async () => ({ kubeVersion: "v1.37.2", apiVersions: ["v1", "apps.gitlab.com/v2alpha1"] }),
    versions: async () => ["1.0.0"],
    render: async () => render(ns),
  });
  const start = async () => {
    op = await startGitLabTarget(cp.kubeconfigPath, ns, source, { requeueInterval: "1s" });
  };
  const secret = (name: string) => client.getOrUndefined<SecretObj>(SECRET, name, ns);
  const resource = () => client.getOrUndefined<GitLabSecrets>(GITLABSECRETS, "gl", ns);
  const ready = (gs: GitLabSecrets | undefined) => gs?.status?.conditions?.find((c) => c.type === "Ready");
  const decoded = (s: SecretObj | undefined, key: string) =>
    s?.data?.[key] === undefined ? undefined : Buffer.from(s.data[key]!, "base64").toString("utf8");
  /** Ready as wanted, at the resource's current generation. */
  const untilReady = (reason: string, status: "True" | "False" = "True") =>
    eventually(
      async () => {
        const gs = await resource();
        const c = ready(gs);
        return c?.reason === reason &&
          c.status === status &&
          c.observedGeneration === gs?.metadata.generation &&
          gs?.status?.observedGeneration === gs?.metadata.generation
          ? gs
          : undefined;
      },
      WAIT_MS,
      `Ready=${status} ${reason} at the current generation`,
    );

  const spec = {
    policy: "fill-missing",
    secrets: [
      {
        name: "gl-gitaly-secret",
        type: "Opaque",
        generators: [{ type: "random", key: "token", charset: "alphanumeric", length: 64 }],
      },
      {
        name: "gl-workhorse-secret",
        type: "Opaque",
        generators: [
          { type: "random", key: "shared_secret", charset: "alphanumeric", length: 32, encoding: "base64" },
        ],
      },
      {
        name: "gl-gitlab-runner-secret",
        type: "Opaque",
        generators: [
          { type: "random", key: "runner-registration-token", charset: "alphanumeric", length: 64 },
          { type: "static", key: "runner-token", value: "" },
        ],
      },
    ],
  };

  before(async () => {
    cp = await startControlPlane();
    client = clientFor(cp.kubeconfigPath);
    ns = await freshNamespace(client, "gl-secrets");
    await installGitLabCrds(client, false);
    // Started after the CRDs exist: the garbage collector's first discovery then watches their
    // kinds, instead of finding them at its next discovery pass up to 30 s later.
    await cp.startControllerManager(["garbagecollector"]);
    await start();
  });
  after(async () => {
    await op?.stop();
    client?.close();
    await cp?.stop();
  });

  it("the definition refuses what GitLab's does, naming the field", async () => {
    const bad = async (s: unknown) => {
      const e = await client
        .create(GITLABSECRETS, {
          apiVersion: "apps.gitlab.com/v2alpha1",
          kind: "GitLabSecrets",
          metadata: { name: "bad", namespace: ns },
          spec: s,
        } as KubeObject)
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      assert.ok(isInvalid(e), `refused with 422: ${String(e)}`);
      return (e as Error).message;
    };
    assert.match(
      await bad({ secrets: [{ name: "a", generators: [{ type: "random", key: "k", length: 8 }] }] }),
      /a random generator needs key, charset, length/,
    );
    assert.match(
      await bad({
        secrets: [{ name: "a", generators: [{ type: "random", key: "k", charset: "base32", length: 8 }] }],
      }),
      /spec\.secrets\[0\]\.generators\[0\]\.charset/,
    );
    const cert = (authority: Record<string, unknown>) => ({
      certificates: [
        {
          authority,
          domain: "example.com",
          tlsSecret: "t",
          caSecret: "c",
          caKey: "cfssl_ca",
          chainSecret: "ch",
          chainKey: "gitlab.example.com.crt",
        },
      ],
    });
    assert.match(await bad(cert({ algorithm: "ed25519" })), /spec\.certificates\[0\]\.authority\.algorithm/);
    assert.match(await bad(cert({ algorithm: "rsa", keySize: 4095 })), /an RSA keySize must be even/);
  });

  const first: Record<string, Record<string, string>> = {};

  it("creates the missing Secrets with every key and fills in a pre-existing one without changing it", async () => {
    // A Secret the user made before: its token stays byte for byte, its own key stays, its type stays.
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "gl-gitlab-runner-secret", namespace: ns, labels: { mine: "yes" } },
      type: "Opaque",
      data: { "runner-token": Buffer.from("set-by-hand").toString("base64"), notes: "" },
    } as KubeObject);
    await client.create(GITLABSECRETS, {
      apiVersion: "apps.gitlab.com/v2alpha1",
      kind: "GitLabSecrets",
      metadata: { name: "gl", namespace: ns, labels },
      spec,
    } as KubeObject);
    const gs = await untilReady(GitLabSecretsReason.SecretsReady);
    assert.deepEqual(gs.status?.secrets, [
      { name: "gl-gitaly-secret", ready: true },
      { name: "gl-workhorse-secret", ready: true },
      { name: "gl-gitlab-runner-secret", ready: true },
    ]);
    const gitaly = (await secret("gl-gitaly-secret"))!;
    assert.match(decoded(gitaly, "token")!, /^[a-zA-Z0-9]{64}$/);
    assert.equal(gitaly.type, "Opaque");
    assert.deepEqual(gitaly.metadata.labels, labels, "the resource's labels, as the Job applies them");
    assert.equal(gitaly.metadata.ownerReferences, undefined, "no owner: the values outlive the resource");
    const workhorse = decoded(await secret("gl-workhorse-secret"), "shared_secret")!;
    assert.match(workhorse, /^[A-Za-z0-9+/=]+\n$/, "base64 with the trailing newline");
    assert.match(Buffer.from(workhorse, "base64").toString("utf8"), /^[a-zA-Z0-9]{32}$/);
    const runner = (await secret("gl-gitlab-runner-secret"))!;
    assert.equal(decoded(runner, "runner-token"), "set-by-hand");
    assert.equal(runner.data?.["notes"], "", "a key the spec does not name is kept, empty as it was");
    assert.match(decoded(runner, "runner-registration-token")!, /^[a-zA-Z0-9]{64}$/);
    assert.deepEqual(runner.metadata.labels, { mine: "yes", ...labels });
    for (const name of ["gl-gitaly-secret", "gl-workhorse-secret", "gl-gitlab-runner-secret"])
      first[name] = { ...(await secret(name))!.data };
  });

  it("writes nothing after a restart: every value and resourceVersion unchanged", async () => {
    const versions = new Map<string, string | undefined>();
    for (const name of Object.keys(first)) versions.set(name, (await secret(name))!.metadata.resourceVersion);
    await op!.stop();
    await start();
    // The restarted controller has looked at the resource: its first pass is done.
    await eventually(
      () => (op!.passes(`${ns}/gl`) > 0 ? true : undefined),
      WAIT_MS,
      "a pass after the restart",
    );
    for (const [name, data] of Object.entries(first)) {
      const now = (await secret(name))!;
      assert.deepEqual(now.data, data, `${name} unchanged`);
      assert.equal(now.metadata.resourceVersion, versions.get(name), `${name} not written`);
    }
  });

  it("regenerates only a key deleted by hand", async () => {
    await client.jsonPatch(SECRET, "gl-gitlab-runner-secret", ns, [
      { op: "remove", path: "/data/runner-registration-token" },
    ]);
    const back = await eventually(
      async () => {
        const s = await secret("gl-gitlab-runner-secret");
        return s?.data?.["runner-registration-token"] !== undefined ? s : undefined;
      },
      WAIT_MS,
      "the deleted key to be generated again",
    );
    const old = first["gl-gitlab-runner-secret"]!;
    assert.notEqual(back.data!["runner-registration-token"], old["runner-registration-token"], "a new value");
    assert.equal(back.data!["runner-token"], old["runner-token"]);
    assert.equal(back.data!["notes"], old["notes"]);
    first["gl-gitlab-runner-secret"] = { ...back.data };
    for (const name of ["gl-gitaly-secret", "gl-workhorse-secret"])
      assert.deepEqual((await secret(name))!.data, first[name], `${name} untouched`);
  });

  it("adds a key declared later, leaving the others as they are", async () => {
    const secrets = structuredClone(spec.secrets) as {
      name: string;
      generators: Record<string, unknown>[];
    }[];
    secrets[0]!.generators.push(
      { type: "bytes", key: "extra", length: 32, encoding: "base64" },
      { type: "rsa", key: "signing.key", bits: 2048 },
    );
    await client.mergePatch(GITLABSECRETS, "gl", ns, { spec: { secrets } });
    const gs = await untilReady(GitLabSecretsReason.SecretsReady);
    assert.equal(gs.metadata.generation, 2);
    const gitaly = (await secret("gl-gitaly-secret"))!;
    assert.equal(gitaly.data!["token"], first["gl-gitaly-secret"]!["token"]);
    assert.equal(Buffer.from(decoded(gitaly, "extra")!, "base64").length, 32);
    assert.match(decoded(gitaly, "signing.key")!, /^-----BEGIN PRIVATE KEY-----\n/);
    for (const name of ["gl-workhorse-secret", "gl-gitlab-runner-secret"])
      assert.deepEqual((await secret(name))!.data, first[name], `${name} untouched`);
    first["gl-gitaly-secret"] = { ...gitaly.data };
  });

  // Changed on purpose (issue 44): sshHostKeys was refused as not implemented; it is generated now.
  it("generates the SSH host key pairs; a pair removed after it was recorded ready is reported, never generated again", async () => {
    const gs0 = (await resource())!;
    const secrets = [
      ...(gs0.spec.secrets ?? []),
      { name: "gl-gitlab-shell-host-keys", generators: [{ type: "sshHostKeys" }] },
    ];
    await client.mergePatch(GITLABSECRETS, "gl", ns, { spec: { secrets } });
    const gs = await untilReady(GitLabSecretsReason.SecretsReady);
    const keys = (await secret("gl-gitlab-shell-host-keys"))!;
    const types = ["rsa", "ecdsa", "ed25519"];
    assert.deepEqual(
      Object.keys(keys.data ?? {}).sort(),
      types.flatMap((t) => [`ssh_host_${t}_key`, `ssh_host_${t}_key.pub`]).sort(),
    );
    assert.match(decoded(keys, "ssh_host_ed25519_key")!, /^-----BEGIN OPENSSH PRIVATE KEY-----\n/);
    assert.match(decoded(keys, "ssh_host_rsa_key.pub")!, /^ssh-rsa AAAA/);
    assert.deepEqual(
      gs.status?.secrets?.find((s) => s.name === "gl-gitlab-shell-host-keys"),
      { name: "gl-gitlab-shell-host-keys", ready: true, readyUnits: types.map((t) => `ssh_host_${t}_key`) },
    );
    // Clients trust the host keys they saw: a pair that is gone is reported, not replaced by a new one.
    await client.mergePatch(SECRET, "gl-gitlab-shell-host-keys", ns, {
      data: { ssh_host_rsa_key: null, "ssh_host_rsa_key.pub": null },
    });
    const reported = await untilReady(GitLabSecretsReason.SecretsReported, "False");
    assert.match(
      ready(reported)!.message,
      /gl-gitlab-shell-host-keys: ssh_host_rsa_key: the host key pair recorded ready is gone; not generated again/,
    );
    const after = (await secret("gl-gitlab-shell-host-keys"))!;
    assert.equal(after.data?.["ssh_host_rsa_key"], undefined, "not generated again");
    assert.equal(
      after.data?.["ssh_host_ed25519_key"],
      keys.data?.["ssh_host_ed25519_key"],
      "the others kept",
    );
    assert.equal(reported.status?.secrets?.find((s) => s.name === "gl-gitlab-shell-host-keys")?.ready, false);
    first["gl-gitlab-shell-host-keys"] = { ...after.data }; // the private keys join the leak search
  });

  it("generates the certificate set: the API server takes the TLS Secret, its certificate verifies against the authority", async () => {
    await client.mergePatch(GITLABSECRETS, "gl", ns, {
      spec: {
        certificates: [
          {
            authority: {
              commonName: "GitLab Helm Chart",
              organization: ns,
              organizationalUnit: "gl",
              algorithm: "ecdsa",
            },
            domain: "example.com",
            tlsSecret: "gl-wildcard-tls",
            caSecret: "gl-wildcard-tls-ca",
            caKey: "cfssl_ca",
            chainSecret: "gl-wildcard-tls-chain",
            chainKey: "gitlab.example.com.crt",
          },
        ],
      },
    });
    const gs = await eventually(
      async () => {
        const g = await resource();
        return g?.status?.secrets?.some((s) => s.name === "gl-wildcard-tls" && s.ready) ? g : undefined;
      },
      60_000,
      "the certificate set ready",
    );
    assert.deepEqual(gs.status?.secrets?.find((s) => s.name === "gl-wildcard-tls")?.readyUnits, [
      "certificates/example.com",
    ]);
    const tls = (await secret("gl-wildcard-tls")) as SecretObj & { type?: string };
    assert.equal(tls.type, "kubernetes.io/tls");
    const ca = new X509Certificate(decoded(await secret("gl-wildcard-tls-ca"), "cfssl_ca")!);
    const leaf = new X509Certificate(decoded(tls, "tls.crt")!);
    assert.ok(leaf.verify(ca.publicKey) && leaf.checkHost("gitlab.example.com"));
    assert.ok(leaf.checkPrivateKey(createPrivateKey(decoded(tls, "tls.key")!)));
    for (const name of ["gl-wildcard-tls", "gl-wildcard-tls-ca", "gl-wildcard-tls-chain"])
      first[name] = { ...(await secret(name))!.data };
  });

  it("never puts a value in the log, events or status", async () => {
    const search = new LeakSearch();
    search.add("operator log", op!.logs.join(""));
    await search.addNamespace(client, ns, [GITLABSECRETS]);
    const values = Object.values(first)
      .flatMap((d) => Object.values(d))
      .map((v) => Buffer.from(v, "base64").toString("utf8").trim())
      .filter((v) => v.length >= 16);
    assert.ok(values.length >= 4);
    search.assertNone(values, "GitLabSecrets");
  });

  it("leaves the Secrets when the resource is deleted (the garbage collector has run)", async () => {
    const gs = (await resource())!;
    // A witness the garbage collector removes once the resource is gone: it shows the collector
    // has seen the deletion, so the Secrets that remain were not merely not collected yet.
    await client.create(SECRET, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "gc-witness",
        namespace: ns,
        ownerReferences: [
          {
            apiVersion: "apps.gitlab.com/v2alpha1",
            kind: "GitLabSecrets",
            name: "gl",
            uid: gs.metadata.uid!,
          },
        ],
      },
    } as KubeObject);
    await client.delete(GITLABSECRETS, "gl", ns);
    await eventually(
      async () => ((await secret("gc-witness")) === undefined ? true : undefined),
      120_000,
      "the garbage collector to remove the witness",
    );
    for (const [name, data] of Object.entries(first))
      assert.deepEqual((await secret(name))?.data, data, name);
    assert.ok(isNotFound(await client.get(GITLABSECRETS, "gl", ns).catch((e: unknown) => e)));
  });

  it("a GitLabCore applies the GitLabSecrets its chart renders, owns it, and its deletion leaves the Secrets", async () => {
    await applyGitLab(
      client,
      gitlabCore(ns, "core", {
        version: { type: "Static", version: "1.0.0" },
        hostname: "gitlab.example.com",
      }),
    );
    await waitForGitLab(client, ns, "core", (g) => g.status?.version === "1.0.0", "1.0.0 applied", WAIT_MS);
    const core = await client.get<KubeObject>(GITLABCORE, "core", ns);
    const applied = await eventually(
      () => client.getOrUndefined<GitLabSecrets>(GITLABSECRETS, "core", ns),
      WAIT_MS,
      "the rendered GitLabSecrets",
    );
    assert.deepEqual(
      applied.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
      [["GitLabCore", "core", core.metadata.uid, true]],
    );
    const made = await eventually(
      async () => {
        const s = await secret("core-gitlab-shell-secret");
        return s?.data?.["secret"] ? s : undefined;
      },
      WAIT_MS,
      "the Secret the rendered GitLabSecrets declares",
    );
    assert.equal(made.metadata.ownerReferences, undefined);
    await client.delete(GITLABCORE, "core", ns);
    await eventually(
      async () =>
        isNotFound(await client.get(GITLABSECRETS, "core", ns).catch((e: unknown) => e)) ? true : undefined,
      120_000,
      "the GitLabSecrets to go with its GitLabCore",
    );
    assert.deepEqual(
      (await secret("core-gitlab-shell-secret"))?.data,
      made.data,
      "the Secret and its value stay",
    );
  });

  it("observe-only: reports what is missing and writes no Secret", async () => {
    const ns2 = await freshNamespace(client, "gl-secrets-observe");
    const observer = await startGitLabTarget(cp.kubeconfigPath, ns2, source, { observeOnly: true });
    try {
      await client.create(GITLABSECRETS, {
        apiVersion: "apps.gitlab.com/v2alpha1",
        kind: "GitLabSecrets",
        metadata: { name: "gl", namespace: ns2, labels },
        spec: { secrets: spec.secrets.slice(0, 1) },
      } as KubeObject);
      const gs = await eventually(
        async () => {
          const g = await client.getOrUndefined<GitLabSecrets>(GITLABSECRETS, "gl", ns2);
          return ready(g)?.reason === GitLabSecretsReason.ObserveOnly ? g : undefined;
        },
        WAIT_MS,
        "Ready=False ObserveOnly",
      );
      assert.equal(ready(gs)!.status, "False");
      assert.match(ready(gs)!.message, /would have: created gl-gitaly-secret \(token\)/);
      assert.deepEqual(gs.status?.secrets, [{ name: "gl-gitaly-secret", ready: false }]);
      assert.equal(await client.getOrUndefined(SECRET, "gl-gitaly-secret", ns2), undefined);
    } finally {
      await observer.stop();
    }
  });
});
