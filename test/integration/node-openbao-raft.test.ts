import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import { eventually } from "../support/kube.js";
import { deleteNamespace, type NodeNamespace, nodeNamespace } from "../support/node.js";

// A 3-node OpenBao Raft cluster from plain manifests (not the operator): proves the node runs OpenBao
// under its upstream image name, with persistent volumes writable by uid 100, stable per-pod DNS
// names and pod-to-pod traffic, i.e. what the OpenBao target's StatefulSets will need.

describe("node: OpenBao Raft cluster from manifests", () => {
  let ctx: NodeNamespace;
  before(async () => {
    ctx = await nodeNamespace("node-bao");
  });
  after(async () => {
    await deleteNamespace(ctx);
  });

  it("forms a 3-voter Raft cluster once initialised and unsealed", async () => {
    const ns = ctx.namespace;
    const peer = (i: number) => `bao-${i}.bao-internal.${ns}.svc.cluster.local`;
    const config = `
disable_mlock = true
ui = false
listener "tcp" {
  address = "0.0.0.0:8200"
  cluster_address = "0.0.0.0:8201"
  tls_disable = true
}
storage "raft" {
  path = "/openbao/data"
${[0, 1, 2].map((i) => `  retry_join {\n    leader_api_addr = "http://${peer(i)}:8200"\n  }`).join("\n")}
}
`;
    const labels = { app: "bao" };
    await ctx.apply(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "bao-config" },
        data: { "config.hcl": config },
      },
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "bao-internal" },
        spec: {
          clusterIP: "None",
          // Sealed members are not Ready, yet they must find each other to join.
          publishNotReadyAddresses: true,
          selector: labels,
          ports: [
            { name: "api", port: 8200 },
            { name: "cluster", port: 8201 },
          ],
        },
      },
      {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "bao" },
        spec: {
          serviceName: "bao-internal",
          replicas: 3,
          podManagementPolicy: "Parallel",
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              securityContext: { runAsUser: 100, runAsGroup: 1000, fsGroup: 1000, runAsNonRoot: true },
              containers: [
                {
                  name: "openbao",
                  // The short upstream name, as the operator infers it from spec.version.
                  image: `openbao/openbao:${BAO_DEFAULT_VERSION}`,
                  imagePullPolicy: "IfNotPresent",
                  args: ["server", "-config=/openbao/config/config.hcl"],
                  env: [
                    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                    { name: "BAO_ADDR", value: "http://127.0.0.1:8200" },
                    {
                      name: "BAO_API_ADDR",
                      value: `http://$(POD_NAME).bao-internal.${ns}.svc.cluster.local:8200`,
                    },
                    {
                      name: "BAO_CLUSTER_ADDR",
                      value: `http://$(POD_NAME).bao-internal.${ns}.svc.cluster.local:8201`,
                    },
                    { name: "BAO_RAFT_NODE_ID", value: "$(POD_NAME)" },
                  ],
                  ports: [{ containerPort: 8200 }, { containerPort: 8201 }],
                  volumeMounts: [
                    { name: "config", mountPath: "/openbao/config" },
                    { name: "data", mountPath: "/openbao/data" },
                  ],
                },
              ],
              volumes: [{ name: "config", configMap: { name: "bao-config" } }],
            },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: "data" },
              spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "128Mi" } } },
            },
          ],
        },
      },
    );
    await ctx.waitFor("statefulset/bao", "jsonpath={.status.readyReplicas}=3", 300);

    const bao = (pod: string, ...args: string[]) => ctx.exec(pod, ["bao", ...args]);
    // The API answers (sealed, uninitialised) before we go on; `status` exits 2 while sealed.
    await eventually(
      async () => {
        const out = await ctx.kubectl(["exec", "bao-0", "--", "sh", "-c", "bao status -format=json; true"]);
        return JSON.parse(out).initialized === false ? true : undefined;
      },
      60_000,
      "bao-0 answering as uninitialised",
    );
    const init = JSON.parse(
      await bao("bao-0", "operator", "init", "-key-shares=1", "-key-threshold=1", "-format=json"),
    );
    const unsealKey: string = init.unseal_keys_b64[0];
    const rootToken: string = init.root_token;
    await bao("bao-0", "operator", "unseal", unsealKey);
    // The followers join through retry_join once they are given the unseal key.
    for (const pod of ["bao-1", "bao-2"]) {
      await eventually(
        async () => {
          const out = await ctx.kubectl([
            "exec",
            pod,
            "--",
            "sh",
            "-c",
            `bao operator unseal -format=json ${unsealKey}; true`,
          ]);
          return out.includes('"sealed": false') || out.includes('"sealed":false') ? true : undefined;
        },
        120_000,
        `${pod} joined and unsealed`,
      );
    }
    const peers = await eventually(
      async () => {
        const out = await ctx.kubectl([
          "exec",
          "bao-0",
          "--",
          "sh",
          "-c",
          `BAO_TOKEN=${rootToken} bao operator raft list-peers -format=json`,
        ]);
        const servers: Array<{ node_id: string; voter: boolean; leader: boolean }> =
          JSON.parse(out).data.config.servers;
        return servers.length === 3 && servers.every((s) => s.voter) ? servers : undefined;
      },
      120_000,
      "3 Raft voters",
    );
    assert.deepEqual(peers.map((p) => p.node_id).sort(), ["bao-0", "bao-1", "bao-2"]);
    assert.equal(peers.filter((p) => p.leader).length, 1);
  });
});
