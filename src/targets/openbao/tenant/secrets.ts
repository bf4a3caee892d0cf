/**
 * The Secret names the openbao target writes and reads in one namespace, from the clusters (and
 * restore requests) there: the allow-lists of the tenant's name-scoped Secret Roles. Upstream's
 * rules (TLS when operator-managed, the root token unless OpenBao initializes itself, the unseal key
 * for the static seal; the referenced credentials and tokens read), with this target's own Secret
 * names from identity.ts and the two it adds: the self-init requests and inline seal credentials.
 * Pure.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import { throwawayClusterName } from "../drill/names.js";
import { clusterNames } from "../identity.js";

export interface SecretAllowLists {
  /** Sorted, without repeats. */
  write: string[];
  read: string[];
}

const named = (ref: { name?: string | undefined } | undefined): string[] => {
  const name = ref?.name?.trim();
  return name ? [name] : [];
};

function clusterSecrets(c: OpenBaoCluster): SecretAllowLists {
  const names = clusterNames({ name: c.metadata.name ?? "", namespace: c.metadata.namespace ?? "" });
  const spec = c.spec;
  const write: string[] = [];
  const read: string[] = [];
  const mode = spec.tls?.mode ?? "OperatorManaged";
  if (mode === "OperatorManaged") write.push(names.caSecret, names.serverSecret);
  else read.push(spec.tls?.caSecretName || names.caSecret, spec.tls?.serverSecretName || names.serverSecret);
  read.push(...named(spec.tls?.acme?.caCertSecretRef));
  if (spec.selfInit?.enabled) write.push(names.selfInitSecret);
  else write.push(names.rootTokenSecret);
  const seal = spec.unseal?.type ?? "static";
  if (seal === "static") write.push(names.unsealKeySecret);
  // Inline credentials of a seal with a block are written to this Secret (and it is removed again).
  else write.push(names.sealCredentialsSecret);
  // A restore test copies the static seal key under its throwaway's name before the throwaway
  // exists (its other Secrets are the throwaway's own, listed once it does), and reads the canary's token.
  const test = spec.backup?.restoreTest;
  if (test && test.enabled !== false) {
    if (seal === "static") write.push(`${throwawayClusterName(c.metadata.name ?? "")}-unseal-key`);
    read.push(...named(test.canary?.tokenSecretRef));
  }
  read.push(
    ...named(spec.unseal?.credentialsSecretRef),
    ...named(spec.backup?.target?.credentialsSecretRef),
    ...named(spec.backup?.tokenSecretRef),
    ...named(spec.upgrade?.tokenSecretRef),
  );
  return { write, read };
}

function restoreSecrets(r: OpenBaoRestore): string[] {
  return [...named(r.spec.source?.target?.credentialsSecretRef), ...named(r.spec.tokenSecretRef)];
}

const sorted = (names: Iterable<string>): string[] => [...new Set(names)].sort();

/** The allow-lists over every cluster and restore of the namespace; a name written is not also listed as read. */
export function secretAllowLists(
  clusters: readonly OpenBaoCluster[],
  restores: readonly OpenBaoRestore[] = [],
): SecretAllowLists {
  const write = new Set<string>();
  const read = new Set<string>();
  for (const c of clusters) {
    const s = clusterSecrets(c);
    for (const n of s.write) write.add(n);
    for (const n of s.read) read.add(n);
  }
  for (const r of restores) for (const n of restoreSecrets(r)) read.add(n);
  return { write: sorted(write), read: sorted([...read].filter((n) => !write.has(n))) };
}
