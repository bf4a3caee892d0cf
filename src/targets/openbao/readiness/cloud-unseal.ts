/**
 * CloudUnsealIdentityReady, pure: how the OpenBao pods authenticate to a cloud KMS seal (awskms,
 * gcpckms, azurekeyvault, ocikms). A credentials Secret must exist (Ready); inline credentials are
 * Ready too (the SecurityRisk condition speaks of them); without either, the pods rely on the
 * provider's ambient identity — WorkloadIdentityConfigured when the ServiceAccount (and, for Azure,
 * the pods) carry the metadata a workload identity needs, AmbientIdentityAssumed otherwise.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoClusterReason as R } from "../../../apis/openbaocluster-names.js";
import { refOf } from "../cluster-ref.js";
import { clusterNames } from "../identity.js";
import type { Readiness } from "./contract.js";
import type { Lookup } from "./facts.js";

type Obj = Record<string, unknown>;
const text = (o: Obj | undefined, k: string) => String(o?.[k] ?? "").trim();

const PROVIDERS = {
  awskms: { label: "AWS KMS", section: "awskms", inline: ["accessKey", "secretKey", "sessionToken"] },
  gcpckms: { label: "GCP Cloud KMS", section: "gcpCloudKMS", inline: ["credentials"] },
  azurekeyvault: { label: "Azure Key Vault", section: "azureKeyVault", inline: ["clientSecret"] },
  ocikms: { label: "OCI KMS", section: "ocikms", inline: [] },
} as const;
type Provider = keyof typeof PROVIDERS;

function providerOf(c: OpenBaoCluster): { type: Provider; section: Obj } | undefined {
  const u = c.spec?.unseal as Obj | undefined;
  const type = u?.["type"] as string | undefined;
  if (!type || !(type in PROVIDERS)) return undefined;
  const section = u?.[PROVIDERS[type as Provider].section] as Obj | undefined;
  return section ? { type: type as Provider, section } : undefined;
}

/** Whether the condition applies: a cloud KMS seal with its settings. */
export const cloudUnsealApplies = (c: OpenBaoCluster): boolean => providerOf(c) !== undefined;

export const unsealSecretName = (c: OpenBaoCluster): string | undefined =>
  cloudUnsealApplies(c) ? c.spec.unseal?.credentialsSecretRef?.name?.trim() || undefined : undefined;

const ociApiKey = (s: Obj) =>
  s["authTypeAPIKey"] === true || text(s, "authType").toLowerCase().replace("_", "") === "apikey";

export function cloudUnsealIdentity(c: OpenBaoCluster, secrets: ReadonlyMap<string, Lookup>): Readiness {
  const { type, section } = providerOf(c)!;
  const label = PROVIDERS[type].label;
  const ns = c.metadata.namespace;
  const sa = c.spec.serviceAccount?.name?.trim() || clusterNames(refOf(c)).serviceAccount;
  const secret = c.spec.unseal?.credentialsSecretRef?.name?.trim();
  if (type === "ocikms" && secret && !ociApiKey(section))
    return {
      status: "False",
      reason: R.PrerequisitesMissing,
      message:
        "unseal.credentialsSecretRef with ocikms needs ocikms.authTypeAPIKey: the Secret is mounted only for API-key login",
    };
  if (secret && (type !== "ocikms" || ociApiKey(section))) {
    const l = secrets.get(secret);
    if (l === "forbidden")
      return {
        status: "Unknown",
        reason: R.Unknown,
        message: `cannot read ${label} credentials Secret ${ns}/${secret}`,
      };
    if (typeof l !== "object")
      return {
        status: "False",
        reason: R.CredentialsSecretMissing,
        message: `${label} credentials Secret ${ns}/${secret} (spec.unseal.credentialsSecretRef) does not exist`,
      };
    return {
      status: "True",
      reason: R.Ready,
      message: `${label}: the pods (ServiceAccount ${sa}) use the credentials in Secret ${ns}/${secret}`,
    };
  }
  const inline = PROVIDERS[type].inline.filter((k) => text(section, k) !== "");
  if (inline.length > 0 || (type === "ocikms" && ociApiKey(section)))
    return {
      status: "True",
      reason: R.Ready,
      message:
        type === "ocikms"
          ? `${label}: API-key login without unseal.credentialsSecretRef; the OCI config must already be in the pods`
          : `${label}: the pods use credentials given in spec.unseal (${inline.join(", ")}); prefer unseal.credentialsSecretRef or a workload identity`,
    };
  const annotated = Object.keys(c.spec.serviceAccount?.annotations ?? {}).length > 0;
  const podLabels =
    Object.keys((c.spec.podMetadata as { labels?: Obj } | undefined)?.labels ?? {}).length > 0;
  const workload = type === "azurekeyvault" ? annotated && podLabels : type !== "ocikms" && annotated;
  return {
    status: "True",
    reason: workload ? R.WorkloadIdentityConfigured : R.AmbientIdentityAssumed,
    message: workload
      ? `${label}: the pods rely on the workload identity configured on ServiceAccount ${sa}`
      : `${label}: no credentials configured; the pods (ServiceAccount ${sa}) rely on the provider's ambient identity${type === "ocikms" ? " (instance principal)" : "; set spec.serviceAccount.annotations for a workload identity"}`,
  };
}
