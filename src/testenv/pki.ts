import { generateKeyPairSync, randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCommand } from "./exec.js";
import { OPENSSL } from "./openssl.js";

export interface ControlPlanePki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  caPem: string;
  adminCertPem: string;
  adminKeyPem: string;
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** A throwaway CA per control plane, so no two environments can trust each other by accident. */
export async function createControlPlanePki(dir: string): Promise<ControlPlanePki> {
  const p = (name: string) => join(dir, name);
  await createCa(dir, "/CN=platform-operator-testenv-ca");
  await issueCertificate(dir, "serving", "/CN=kube-apiserver", [
    "subjectAltName=IP:127.0.0.1,DNS:localhost",
    "extendedKeyUsage=serverAuth",
  ]);
  // system:masters is bound to cluster-admin by the bootstrap RBAC policy.
  await issueCertificate(dir, "admin", "/O=system:masters/CN=testenv-admin", ["extendedKeyUsage=clientAuth"]);

  await writeServiceAccountKeys(dir);

  return {
    caCert: p("ca.crt"),
    caKey: p("ca.key"),
    servingCert: p("serving.crt"),
    servingKey: p("serving.key"),
    adminCert: p("admin.crt"),
    adminKey: p("admin.key"),
    serviceAccountKey: p("sa.key"),
    serviceAccountPub: p("sa.pub"),
    caPem: await readFile(p("ca.crt"), "utf8"),
    adminCertPem: await readFile(p("admin.crt"), "utf8"),
    adminKeyPem: await readFile(p("admin.key"), "utf8"),
  };
}

/** A self-signed CA as `ca.crt` and `ca.key` in `dir`. */
export async function createCa(dir: string, subject: string): Promise<void> {
  // biome-ignore format: flag/value pairs read better on shared lines
  await runCommand(OPENSSL, [
    "req", "-x509", ...EC_KEY, "-keyout", join(dir, "ca.key"), "-out", join(dir, "ca.crt"), "-days", "3650",
    "-subj", subject,
    "-addext", "basicConstraints=critical,CA:TRUE",
    "-addext", "keyUsage=critical,keyCertSign,cRLSign",
  ]);
}

/** The ServiceAccount token signing pair as `sa.key` and `sa.pub` in `dir`. */
export async function writeServiceAccountKeys(dir: string): Promise<void> {
  // ES256 keeps key generation instant; the API server signs and verifies tokens with either family.
  const sa = generateKeyPairSync("ec", {
    namedCurve: "prime256v1",
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  await writeFile(join(dir, "sa.key"), sa.privateKey, { mode: 0o600 });
  await writeFile(join(dir, "sa.pub"), sa.publicKey);
}

/**
 * `<name>.crt` and `<name>.key` in `dir`, signed by the CA there. A CSR plus `x509 -req -extfile`
 * works with both OpenSSL 1.1 and 3.x, unlike `req -x509 -CA`.
 */
export async function issueCertificate(
  dir: string,
  name: string,
  subject: string,
  extensions: string[],
): Promise<void> {
  const p = (suffix: string) => join(dir, `${name}.${suffix}`);
  await runCommand(OPENSSL, ["req", ...EC_KEY, "-keyout", p("key"), "-out", p("csr"), "-subj", subject]);
  await writeFile(p("ext"), `${["keyUsage=critical,digitalSignature", ...extensions].join("\n")}\n`);
  // biome-ignore format: flag/value pairs read better on shared lines
  await runCommand(OPENSSL, [
    "x509", "-req", "-in", p("csr"), "-CA", join(dir, "ca.crt"), "-CAkey", join(dir, "ca.key"),
    "-set_serial", `0x${randomBytes(16).toString("hex")}`, "-days", "3650", "-out", p("crt"), "-extfile", p("ext"),
  ]);
}
