import { writeFile } from "node:fs/promises";

export type KubeconfigUser = { clientCertPem: string; clientKeyPem: string } | { token: string };

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

/**
 * Writes a self-contained kubeconfig (certificates inline) as JSON, which every YAML reader accepts and
 * which needs no YAML writer here. Mode 0600: it holds credentials.
 */
export async function writeKubeconfig(
  path: string,
  opts: { server: string; caPem: string; userName: string; user: KubeconfigUser },
): Promise<void> {
  const user =
    "token" in opts.user
      ? { token: opts.user.token }
      : {
          "client-certificate-data": b64(opts.user.clientCertPem),
          "client-key-data": b64(opts.user.clientKeyPem),
        };
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name: "testenv", cluster: { server: opts.server, "certificate-authority-data": b64(opts.caPem) } },
    ],
    users: [{ name: opts.userName, user }],
    contexts: [
      { name: opts.userName, context: { cluster: "testenv", user: opts.userName, namespace: "default" } },
    ],
    "current-context": opts.userName,
    preferences: {},
  };
  await writeFile(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
}
