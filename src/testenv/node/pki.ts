import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCommand } from "../exec.js";
import { OPENSSL } from "../openssl.js";
import type { NodeAddresses } from "./addresses.js";

export interface NodePki {
  dir: string;
  caCert: string;
  caPem: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** name -> { cert, key } paths, for: apiserver, admin, kubelet, apiserver-kubelet-client. */
  pair(name: "apiserver" | "admin" | "kubelet" | "apiserver-kubelet-client"): { cert: string; key: string };
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** A CA of its own for the node's cluster, and the certificates its components authenticate with. */
export async function createNodePki(root: string, a: NodeAddresses): Promise<NodePki> {
  const dir = join(root, "pki");
  await mkdir(dir, { recursive: true });
  const p = (name: string) => join(dir, name);
  // biome-ignore format: flag/value pairs read better on shared lines
  await runCommand(OPENSSL, [
    "req", "-x509", ...EC_KEY, "-keyout", p("ca.key"), "-out", p("ca.crt"), "-days", "3650",
    "-subj", `/CN=platform-operator-node-${a.index}-ca`,
    "-addext", "basicConstraints=critical,CA:TRUE",
    "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  const domain = a.clusterDomain;
  const names = [
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    `kubernetes.default.svc.${domain}`,
  ];
  await Promise.all([
    issue(dir, "apiserver", "/CN=kube-apiserver", [
      `subjectAltName=${[`IP:${a.nodeIp}`, `IP:${a.kubernetesServiceIp}`, "IP:127.0.0.1", ...names.map((n) => `DNS:${n}`), "DNS:localhost"].join(",")}`,
      "extendedKeyUsage=serverAuth",
    ]),
    issue(dir, "admin", "/O=system:masters/CN=testenv-node-admin", ["extendedKeyUsage=clientAuth"]),
    // The Node authorizer and NodeRestriction admission know a kubelet by exactly this name and group.
    issue(dir, "kubelet", `/O=system:nodes/CN=system:node:${a.nodeName}`, ["extendedKeyUsage=clientAuth"]),
    issue(dir, "apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", [
      "extendedKeyUsage=clientAuth",
    ]),
  ]);
  const sa = generateKeyPairSync("ec", {
    namedCurve: "prime256v1",
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  await writeFile(p("sa.key"), sa.privateKey, { mode: 0o600 });
  await writeFile(p("sa.pub"), sa.publicKey);
  return {
    dir,
    caCert: p("ca.crt"),
    caPem: await readFile(p("ca.crt"), "utf8"),
    serviceAccountKey: p("sa.key"),
    serviceAccountPub: p("sa.pub"),
    pair: (name) => ({ cert: p(`${name}.crt`), key: p(`${name}.key`) }),
  };
}

async function issue(dir: string, name: string, subject: string, extensions: string[]): Promise<void> {
  const p = (suffix: string) => join(dir, `${name}.${suffix}`);
  await runCommand(OPENSSL, ["req", ...EC_KEY, "-keyout", p("key"), "-out", p("csr"), "-subj", subject]);
  await writeFile(p("ext"), `${["keyUsage=critical,digitalSignature", ...extensions].join("\n")}\n`);
  // biome-ignore format: flag/value pairs read better on shared lines
  await runCommand(OPENSSL, [
    "x509", "-req", "-in", p("csr"), "-CA", join(dir, "ca.crt"), "-CAkey", join(dir, "ca.key"),
    "-set_serial", `0x${randomBytes(16).toString("hex")}`, "-days", "3650", "-out", p("crt"), "-extfile", p("ext"),
  ]);
}
