import { runCommand } from "../../src/testenv/exec.js";
import type { SharedNode } from "../../src/testenv/node/shared.js";
import { type OciRegistry, startOciRegistry } from "../../src/testenv/oci-registry.js";
import { makeTempDir } from "../../src/testenv/tempdirs.js";

// An OCI registry on the local node, for images the node's pods pull as they would from any
// registry. It runs in the node's network namespace, so the node's containerd and the operator (which
// runs there too) reach it on the node's loopback — plain HTTP, as containerd and the operator's
// verifier allow for loopback only — while the test pushes and signs through the node's address.

export interface NodeRegistry {
  /** The registry as the test reaches it (node address). */
  registry: OciRegistry;
  /** host:port as the node names it (its loopback): what image references in manifests use. */
  inNode: string;
}

export async function startNodeRegistry(node: SharedNode): Promise<NodeRegistry> {
  const registry = await startOciRegistry(makeTempDir("node-registry"), {
    wrap: (argv) => node.inCluster(argv),
    listen: "0.0.0.0",
    reachAt: node.addresses.nodeIp,
  });
  return { registry, inNode: `127.0.0.1:${registry.port}` };
}

/**
 * Copies an image the node holds (`local`, e.g. docker.io/openbao/openbao:2.7.2) into the registry as
 * `repository:tag` with containerd's own push; returns the manifest digest the registry serves.
 */
export async function pushNodeImage(
  node: SharedNode,
  { registry }: NodeRegistry,
  local: string,
  repository: string,
  tag: string,
): Promise<string> {
  await runCommand(node.ctr, [
    "-a",
    node.containerdSocket,
    "-n",
    "k8s.io",
    "images",
    "push",
    "--plain-http",
    `${registry.host}/${repository}:${tag}`,
    local,
  ]);
  const res = await fetch(`${registry.url}/v2/${repository}/manifests/${tag}`, {
    method: "HEAD",
    headers: {
      Accept: [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
      ].join(", "),
    },
  });
  const digest = res.headers.get("docker-content-digest");
  if (res.status !== 200 || !digest)
    throw new Error(`${repository}:${tag} was not pushed: HTTP ${res.status}`);
  return digest;
}
