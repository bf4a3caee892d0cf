import { createCertificateAuthority, issueServerCertificate } from "../../src/runtime/pki/x509.js";
import { BAO_DEFAULT_VERSION } from "../../src/testenv/cache.js";
import type { NodeNamespace } from "./node.js";
import { poll } from "./openbao-operator.js";

const HOUR = 3_600_000;

export interface TransitOpenBao {
  /** https://transit.<ns>.svc:8200, as the cluster's pods reach it. */
  address: string;
  /** Secret with `token` and `ca.crt`, the shape upstream's unseal.credentialsSecretRef reads. */
  credentialsSecret: string;
  caPem: string;
}

/**
 * A second, real OpenBao on the node that serves the Transit secrets engine over TLS, for clusters
 * whose seal is `transit` (upstream's hardened and external_tls samples). In-memory storage, one
 * key share, initialized and unsealed by the test; its root token is the seal's token. The key
 * `keyName` is created under mount `mountPath`.
 */
export async function startTransitOpenBao(
  ctx: NodeNamespace,
  opts: { keyName: string; mountPath: string; credentialsSecret?: string },
): Promise<TransitOpenBao> {
  const ns = ctx.namespace;
  const now = new Date();
  const ca = createCertificateAuthority("transit test CA", now, 100 * HOUR);
  const leaf = issueServerCertificate(ca, {
    commonName: `transit.${ns}.svc`,
    names: [`transit.${ns}.svc`, `transit.${ns}.svc.cluster.local`, "127.0.0.1"],
    now,
    validityMs: 50 * HOUR,
  });
  const labels = { app: "transit" };
  const config = [
    'storage "inmem" {}',
    "disable_mlock = true",
    'listener "tcp" {',
    '  address = "0.0.0.0:8200"',
    '  tls_cert_file = "/transit/tls/tls.crt"',
    '  tls_key_file = "/transit/tls/tls.key"',
    "}",
    `api_addr = "https://transit.${ns}.svc:8200"`,
  ].join("\n");
  await ctx.apply(
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "transit-tls" },
      type: "kubernetes.io/tls",
      stringData: { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem },
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "transit-config" },
      data: { "config.hcl": config },
    },
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "transit", labels },
      spec: {
        containers: [
          {
            name: "bao",
            image: `openbao/openbao:${BAO_DEFAULT_VERSION}`,
            command: ["bao", "server", "-config=/transit/config/config.hcl"],
            env: [
              { name: "BAO_ADDR", value: "https://127.0.0.1:8200" },
              { name: "BAO_SKIP_VERIFY", value: "true" },
            ],
            ports: [{ containerPort: 8200 }],
            volumeMounts: [
              { name: "tls", mountPath: "/transit/tls", readOnly: true },
              { name: "config", mountPath: "/transit/config", readOnly: true },
            ],
          },
        ],
        volumes: [
          { name: "tls", secret: { secretName: "transit-tls" } },
          { name: "config", configMap: { name: "transit-config" } },
        ],
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "transit" },
      spec: { selector: labels, ports: [{ name: "https", port: 8200, targetPort: 8200 }] },
    },
  );
  await ctx.waitFor("pod/transit", "jsonpath={.status.phase}=Running", 300);
  const bao = (command: string) => ctx.exec("transit", ["sh", "-c", command]);
  const init = await poll(
    async () => bao("bao operator init -key-shares=1 -key-threshold=1 -format=json").catch(() => undefined),
    120_000,
    "the transit OpenBao to initialize",
    1000,
  );
  const { unseal_keys_b64: keys, root_token: token } = JSON.parse(init) as {
    unseal_keys_b64: string[];
    root_token: string;
  };
  await bao(`bao operator unseal ${keys[0]}`);
  const mount = opts.mountPath.replace(/\/+$/, "");
  await poll(
    async () => bao(`BAO_TOKEN=${token} bao secrets enable -path=${mount} transit`).catch(() => undefined),
    60_000,
    "the transit engine to mount",
    1000,
  );
  await bao(`BAO_TOKEN=${token} bao write -f ${mount}/keys/${opts.keyName}`);
  await ctx.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: opts.credentialsSecret ?? "transit-credentials" },
    stringData: { token, "ca.crt": ca.certPem },
  });
  return {
    address: `https://transit.${ns}.svc:8200`,
    credentialsSecret: opts.credentialsSecret ?? "transit-credentials",
    caPem: ca.certPem,
  };
}
