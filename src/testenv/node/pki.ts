import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createCa, issueCertificate, writeServiceAccountKeys } from "../pki.js";
import type { NodeAddresses } from "./addresses.js";

/** The user name of the node's admin kubeconfig (its client certificate's CN). */
export const NODE_ADMIN_USER = "testenv-node-admin";

export interface NodePki {
  dir: string;
  caCert: string;
  caPem: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** name -> { cert, key } paths, for: apiserver, admin, kubelet, apiserver-kubelet-client. */
  pair(name: "apiserver" | "admin" | "kubelet" | "apiserver-kubelet-client"): { cert: string; key: string };
}

/** A CA of its own for the node's cluster, and the certificates its components authenticate with. */
export async function createNodePki(root: string, a: NodeAddresses): Promise<NodePki> {
  const dir = join(root, "pki");
  await mkdir(dir, { recursive: true });
  const p = (name: string) => join(dir, name);
  await createCa(dir, `/CN=platform-operator-node-${a.index}-ca`);
  const domain = a.clusterDomain;
  const names = [
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    `kubernetes.default.svc.${domain}`,
  ];
  await Promise.all([
    issueCertificate(dir, "apiserver", "/CN=kube-apiserver", [
      `subjectAltName=${[`IP:${a.nodeIp}`, `IP:${a.kubernetesServiceIp}`, "IP:127.0.0.1", ...names.map((n) => `DNS:${n}`), "DNS:localhost"].join(",")}`,
      "extendedKeyUsage=serverAuth",
    ]),
    issueCertificate(dir, "admin", `/O=system:masters/CN=${NODE_ADMIN_USER}`, [
      "extendedKeyUsage=clientAuth",
    ]),
    // The Node authorizer and NodeRestriction admission know a kubelet by exactly this name and group.
    issueCertificate(dir, "kubelet", `/O=system:nodes/CN=system:node:${a.nodeName}`, [
      "extendedKeyUsage=clientAuth",
    ]),
    issueCertificate(dir, "apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", [
      "extendedKeyUsage=clientAuth",
    ]),
  ]);
  await writeServiceAccountKeys(dir);
  return {
    dir,
    caCert: p("ca.crt"),
    caPem: await readFile(p("ca.crt"), "utf8"),
    serviceAccountKey: p("sa.key"),
    serviceAccountPub: p("sa.pub"),
    pair: (name) => ({ cert: p(`${name}.crt`), key: p(`${name}.key`) }),
  };
}
