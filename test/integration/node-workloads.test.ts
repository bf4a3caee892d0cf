import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCommand } from "../../src/testenv/exec.js";
import { OPERATOR_IMAGE } from "../../src/testenv/node/images/operator.js";
import { eventually } from "../support/kube.js";
import { BUSYBOX, deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";

// Workloads on the real node: kubelet, containerd, runc, CNI, kube-proxy and CoreDNS doing their jobs.

describe("node: workloads", () => {
  let ctx: NodeNamespace;
  before(async () => {
    ctx = await nodeNamespace("node-work");
  });
  after(async () => {
    await deleteNamespace(ctx);
  });

  it("runs a pod with ConfigMap, Secret, downward API and projected token volumes, Ready by its probe", async () => {
    const secretValue = "s3cr3t-value";
    await ctx.apply(
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg" }, data: { greeting: "hello" } },
      { apiVersion: "v1", kind: "Secret", metadata: { name: "sec" }, stringData: { password: secretValue } },
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "volumes", labels: { app: "volumes" } },
        spec: {
          containers: [
            {
              name: "main",
              image: BUSYBOX,
              command: ["sh", "-c", "sleep 3600"],
              // Ready only once every volume is really mounted with content.
              readinessProbe: {
                exec: {
                  command: [
                    "sh",
                    "-c",
                    "test -s /cfg/greeting && test -s /sec/password && grep -q app= /info/labels && test -s /token/token",
                  ],
                },
                periodSeconds: 1,
              },
              volumeMounts: [
                { name: "cfg", mountPath: "/cfg" },
                { name: "sec", mountPath: "/sec" },
                { name: "info", mountPath: "/info" },
                { name: "token", mountPath: "/token" },
              ],
            },
          ],
          volumes: [
            { name: "cfg", configMap: { name: "cfg" } },
            { name: "sec", secret: { secretName: "sec" } },
            {
              name: "info",
              downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] },
            },
            {
              name: "token",
              projected: {
                sources: [
                  { serviceAccountToken: { path: "token", audience: "vault", expirationSeconds: 3600 } },
                ],
              },
            },
          ],
        },
      },
    );
    await ctx.waitFor("pod/volumes", "condition=Ready");
    assert.equal(await ctx.exec("volumes", ["cat", "/cfg/greeting"]), "hello");
    assert.equal(await ctx.exec("volumes", ["cat", "/sec/password"]), secretValue);
    assert.match(await ctx.exec("volumes", ["cat", "/info/labels"]), /app="volumes"/);
    const token = await ctx.exec("volumes", ["cat", "/token/token"]);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
    assert.deepEqual(claims.aud, ["vault"]);
    assert.equal(claims["kubernetes.io"].pod.name, "volumes");
    assert.equal(claims["kubernetes.io"].namespace, ctx.namespace);
  });

  it("brings up a 3-replica StatefulSet with claims whose pods resolve each other by DNS and write as uid 100", async () => {
    const labels = { app: "web" };
    await ctx.apply(
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web" },
        spec: { clusterIP: "None", selector: labels, ports: [{ name: "http", port: 8080 }] },
      },
      {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "web" },
        spec: {
          serviceName: "web",
          replicas: 3,
          podManagementPolicy: "Parallel",
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              securityContext: { runAsUser: 100, runAsGroup: 1000, fsGroup: 1000 },
              containers: [
                {
                  name: "main",
                  image: BUSYBOX,
                  command: ["sh", "-c", "echo $HOSTNAME > /data/owner && exec sleep 3600"],
                  readinessProbe: { exec: { command: ["test", "-s", "/data/owner"] }, periodSeconds: 1 },
                  volumeMounts: [{ name: "data", mountPath: "/data" }],
                },
              ],
            },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: "data" },
              spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "64Mi" } } },
            },
          ],
        },
      },
    );
    await ctx.waitFor("statefulset/web", "jsonpath={.status.readyReplicas}=3", 300);
    const claims = await ctx.getJson("pvc");
    assert.equal(claims.items.length, 3);
    for (const claim of claims.items) {
      assert.equal(claim.status.phase, "Bound");
      assert.equal(claim.spec.storageClassName, "local-path", "the default StorageClass applies");
    }
    for (let i = 0; i < 3; i++)
      assert.equal(await ctx.exec(`web-${i}`, ["cat", "/data/owner"]), `web-${i}\n`);
    const web1 = (await ctx.getJson("pod/web-1")).status.podIP;
    const answer = await ctx.exec("web-0", ["nslookup", `web-1.web.${ctx.namespace}.svc.cluster.local`]);
    assert.ok(answer.includes(web1), `web-1's address ${web1} in:\n${answer}`);
    const back = await ctx.exec("web-2", ["nslookup", `web-0.web.${ctx.namespace}.svc.cluster.local`]);
    assert.ok(back.includes((await ctx.getJson("pod/web-0")).status.podIP));
  });

  it("routes a ClusterIP Service, from a pod by name and from the host by address", async () => {
    const labels = { app: "echo" };
    await ctx.apply(
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "echo" },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                {
                  name: "httpd",
                  image: BUSYBOX,
                  command: [
                    "sh",
                    "-c",
                    "mkdir -p /www && echo served-by-$HOSTNAME > /www/index.html && exec httpd -f -p 8080 -h /www",
                  ],
                  readinessProbe: { httpGet: { path: "/", port: 8080 }, periodSeconds: 1 },
                },
              ],
            },
          },
        },
      },
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "echo" },
        spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] },
      },
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "client" },
        spec: { containers: [{ name: "c", image: BUSYBOX, command: ["sleep", "3600"] }] },
      },
    );
    await ctx.waitFor("deployment/echo", "condition=Available");
    await ctx.waitFor("pod/client", "condition=Ready");
    // Available is the API's view; kube-proxy programs the Service's endpoints a moment later (until
    // then it rejects: "No route to host"), and nothing in the API says when. So the first request
    // is retried until it is answered, within a deadline.
    const fromPod = await eventually(
      () =>
        ctx
          .exec("client", ["wget", "-qO-", `http://echo.${ctx.namespace}.svc.cluster.local/`])
          .catch(() => undefined),
      60_000,
      "the Service to answer from a pod",
    );
    assert.match(fromPod, /^served-by-echo-/);
    const clusterIP = (await ctx.getJson("service/echo")).spec.clusterIP as string;
    const res = await fetch(`http://${clusterIP}/`, { signal: AbortSignal.timeout(10_000) });
    assert.match(await res.text(), /^served-by-echo-/);
  });

  it("lets a process inside the node's network namespace resolve cluster names like an in-cluster client", async () => {
    const [command, ...args] = ctx.node.inCluster([
      "/bin/busybox",
      "nslookup",
      "kubernetes.default.svc.cluster.local",
    ]);
    const { stdout } = await runCommand(command!, args);
    assert.ok(stdout.includes(ctx.node.addresses.kubernetesServiceIp), stdout);
    // The resolver is only the cluster's: a name outside it does not resolve (and nothing is forwarded).
    const [c2, ...a2] = ctx.node.inCluster(["/bin/busybox", "nslookup", "example.com"]);
    await assert.rejects(runCommand(c2!, a2));
  });

  it("runs a Job to completion, and marks a failing one Failed", async () => {
    const job = (name: string, script: string) => ({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: "Never",
            containers: [{ name: "main", image: BUSYBOX, command: ["sh", "-c", script] }],
          },
        },
      },
    });
    await ctx.apply(job("succeeds", "echo done"), job("fails", "echo broken >&2; exit 3"));
    await ctx.waitFor("job/succeeds", "condition=Complete");
    await ctx.waitFor("job/fails", "condition=Failed");
    const failed = await ctx.getJson("job/fails");
    assert.equal(failed.status.succeeded ?? 0, 0);
    assert.equal(failed.status.failed, 1);
    assert.match(await ctx.kubectl(["logs", "job/succeeds"]), /^done/);
  });

  it("runs the operator image built from the working tree: `version` as a pod, as a non-root user", async () => {
    await ctx.apply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "operator-version" },
      spec: {
        restartPolicy: "Never",
        securityContext: { runAsNonRoot: true },
        containers: [
          { name: "operator", image: OPERATOR_IMAGE, imagePullPolicy: "Never", args: ["version"] },
        ],
      },
    });
    await ctx.waitFor("pod/operator-version", "jsonpath={.status.phase}=Succeeded", 240);
    const out = await ctx.kubectl(["logs", "operator-version"]);
    assert.match(out, /\d+\.\d+\.\d+/, `version output: ${out}`);
  });
});
