import { createHash, createPrivateKey, type X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import type { OpenBaoClusterSpec, TLSMode } from "../../../../apis/openbaocluster.js";
import type { KeyPairPem } from "../../../../runtime/pki/x509.js";
import { isoTime } from "../../../../runtime/utc-time.js";
import {
  type ClusterRef,
  Component,
  type ComponentName,
  clusterNames,
  clusterRefOf,
  podAddress,
  podHost,
  podName,
  serviceHosts,
} from "../../identity.js";
import { parseDurationMs } from "./duration.js";
import { parseCertificates, sanKey, sanKeys } from "./pem.js";

/**
 * What the certificate service should do, decided from the spec, the Secrets as they are and the
 * time. Pure: key generation and writes happen in the reconciler.
 */

export interface TlsCluster {
  metadata: { name?: string; namespace?: string; annotations?: Record<string, string> };
  spec: Pick<OpenBaoClusterSpec, "replicas" | "readReplicas" | "tls">;
}

export interface TlsSettings {
  enabled: boolean;
  mode: TLSMode;
  /** Age at which an operator-managed leaf is replaced; it is issued for twice as long. */
  rotationMs: number;
  extraSANs: string[];
  caSecretName: string;
  serverSecretName: string;
}

const DEFAULT_ROTATION = "720h";
const DNS_NAME = /^(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/i;

export function clusterRef(c: TlsCluster): ClusterRef {
  if (!c.metadata.name || !c.metadata.namespace)
    throw new Error("metadata.name and metadata.namespace are required");
  return clusterRefOf(c.metadata);
}

/** The TLS part of the spec with defaults, checked; a bad field is an Error naming it. */
export function tlsSettings(c: TlsCluster): TlsSettings {
  const tls = c.spec.tls ?? {};
  const names = clusterNames(clusterRef(c));
  const extraSANs = tls.extraSANs ?? [];
  extraSANs.forEach((san, i) => {
    if (!isIP(san) && (san.length > 253 || !DNS_NAME.test(san)))
      throw new Error(
        `spec.tls.extraSANs[${i}]: ${JSON.stringify(san)} is neither a DNS name nor an IP address`,
      );
  });
  return {
    enabled: tls.enabled ?? true,
    mode: tls.mode ?? "OperatorManaged",
    rotationMs: parseDurationMs(tls.rotationPeriod ?? DEFAULT_ROTATION, "spec.tls.rotationPeriod"),
    extraSANs,
    caSecretName: tls.caSecretName || names.caSecret,
    serverSecretName: tls.serverSecretName || names.serverSecret,
  };
}

/**
 * The cluster's own voter pods by name. Deliberately not the serving revision's: every revision's
 * pods (blue-green's `<name>-<revision>-N`) are covered by the `*.<headless>` wildcards of
 * serviceHosts, and a name list that followed status.blueGreen would re-issue the certificate, whose
 * hash is in the pod template, and so roll every pod in the middle of an upgrade.
 */
function podNames(c: TlsCluster): { names: string[]; addresses: string[]; hosts: string[] } {
  const ref = clusterRef(c);
  const names: string[] = [];
  const addresses: string[] = [];
  const hosts: string[] = [];
  const pods: [number, ComponentName][] = [
    ...Array.from({ length: c.spec.replicas ?? 3 }, (_, i): [number, ComponentName] => [i, Component.Server]),
    ...Array.from({ length: c.spec.readReplicas?.replicas ?? 0 }, (_, i): [number, ComponentName] => [
      i,
      Component.ReadReplica,
    ]),
  ];
  for (const [i, component] of pods) {
    names.push(podName(ref, i, component));
    addresses.push(podAddress(ref, i, component));
    hosts.push(podHost(ref, i, component));
  }
  return { names, addresses, hosts };
}

/**
 * The operator-managed leaf's names: every Service name, every pod (voters at their full count,
 * not the one-pod bootstrap cap, so scale-out needs no new certificate), loopback for probes and
 * the local CLI, and the user's extras. Sorted and unique so the comparison is stable.
 */
export function serverNames(c: TlsCluster, settings: TlsSettings): string[] {
  const { names, addresses, hosts } = podNames(c);
  const all = [
    ...serviceHosts(clusterRef(c)),
    ...names,
    ...addresses,
    ...hosts,
    "localhost",
    "127.0.0.1",
    ...settings.extraSANs,
  ];
  return [...new Set(all)];
}

/**
 * What an External certificate must cover: the client Service as clients in the cluster dial it,
 * and every pod by the address it advertises, which Raft peers verify when they join and the
 * operator verifies when it dials the pod. Upstream's documented names (`*.<name>.<ns>.svc`,
 * `*.<ns>.svc`) cover all of them.
 */
export function requiredExternalNames(c: TlsCluster): string[] {
  const ref = clusterRef(c);
  const svc = clusterNames(ref).clientService;
  return [`${svc}.${ref.namespace}.svc`, ...podNames(c).addresses];
}

/** CAs live long; a leaf lives twice its rotation period, so it is replaced at half its life. */
export const caValidityMs = (rotationMs: number): number => Math.max(3650 * 86_400_000, 10 * rotationMs);
export const leafValidityMs = (rotationMs: number): number => 2 * rotationMs;

export interface StoredCa {
  certPem: string;
  keyPem: string;
  /** ca.crt: the CA in force first, then earlier CAs still valid (trusted during a CA change). */
  bundlePem: string;
}

export interface CaDecision {
  action: "keep" | "create" | "replace";
  reason: string;
  /** A kept CA: epoch ms at which it is due for replacement (a pass should run by then). */
  dueAt?: number;
}

/**
 * The CA is replaced when unreadable or when less than three rotation periods remain, so no leaf
 * it signs is ever cut short by the CA's own expiry.
 */
export function planCa(stored: StoredCa | undefined, rotationMs: number, now: Date): CaDecision {
  if (!stored) return { action: "create", reason: "no CA Secret yet" };
  const cert = parseCertificates(stored.certPem)?.[0];
  if (!cert) return { action: "replace", reason: "the CA Secret's tls.crt holds no readable certificate" };
  if (!keyMatches(cert, stored.keyPem))
    return { action: "replace", reason: "the CA Secret's tls.key does not match its certificate" };
  if (!cert.ca) return { action: "replace", reason: "the CA Secret's certificate is not a CA" };
  const dueAt = Date.parse(cert.validTo) - 3 * rotationMs;
  if (now.getTime() > dueAt)
    return { action: "replace", reason: `the CA expires at ${isoTime(new Date(cert.validTo))}` };
  return { action: "keep", reason: "the CA is current", dueAt };
}

export interface LeafDecision {
  action: "keep" | "issue";
  reason: string;
  /** A kept leaf: epoch ms at which it is due for reissue (a pass should run by then). */
  dueAt?: number;
}

export interface StoredLeaf {
  certPem: string;
  keyPem: string;
  caPem: string;
}

/** Margin kept for certificates issued with a backdated notBefore (see x509.ts). */
const ISSUE_SLACK_MS = 5 * 60_000;

/** The leaf is reissued when missing, unreadable, not from the CA in force, naming other hosts, or due. */
export function planLeaf(
  stored: StoredLeaf | undefined,
  ca: KeyPairPem,
  bundlePem: string,
  names: readonly string[],
  rotationMs: number,
  now: Date,
): LeafDecision {
  if (!stored) return { action: "issue", reason: "no server Secret yet" };
  const leaf = parseCertificates(stored.certPem)?.[0];
  if (!leaf) return { action: "issue", reason: "the server Secret's tls.crt holds no readable certificate" };
  if (!keyMatches(leaf, stored.keyPem))
    return { action: "issue", reason: "the server Secret's tls.key does not match its certificate" };
  const caCert = parseCertificates(ca.certPem)?.[0];
  if (!caCert || !signedBy(leaf, caCert))
    return { action: "issue", reason: "the certificate was not issued by the CA in force" };
  if (stored.caPem !== bundlePem) return { action: "issue", reason: "the CA bundle changed" };
  const want = [...new Set(names.map(sanKey))].sort();
  const have = [...new Set(sanKeys(leaf))].sort();
  if (want.join(",") !== have.join(",")) return { action: "issue", reason: "the names to cover changed" };
  const rotateAt = Date.parse(leaf.validFrom) + ISSUE_SLACK_MS + rotationMs;
  const expiringAt = Date.parse(leaf.validTo) - rotationMs / 2;
  const t = now.getTime();
  if (t >= rotateAt) return { action: "issue", reason: "the rotation period has passed" };
  if (t >= expiringAt) return { action: "issue", reason: "the certificate is close to expiry" };
  return { action: "keep", reason: "the certificate is current", dueAt: Math.min(rotateAt, expiringAt) };
}

// What was checked once for the same parsed certificates (parseCertificates hands out the same
// objects for the same PEM) need not be checked again: a signature check and a private key parse
// on every quiet pass were the rest of a pass's certificate cost.
const signedByMemo = new WeakMap<X509Certificate, WeakMap<X509Certificate, boolean>>();
const keyMatchesMemo = new WeakMap<X509Certificate, Map<string, boolean>>();

function signedBy(leaf: X509Certificate, ca: X509Certificate): boolean {
  const known = signedByMemo.get(leaf)?.get(ca);
  if (known !== undefined) return known;
  let ok: boolean;
  try {
    ok = leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
  } catch {
    ok = false;
  }
  const m = signedByMemo.get(leaf) ?? new WeakMap<X509Certificate, boolean>();
  m.set(ca, ok);
  signedByMemo.set(leaf, m);
  return ok;
}

function keyMatches(cert: X509Certificate, keyPem: string): boolean {
  const known = keyMatchesMemo.get(cert)?.get(keyPem);
  if (known !== undefined) return known;
  let ok: boolean;
  try {
    ok = cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    ok = false;
  }
  // One entry per certificate: a key replaced beside the same certificate replaces it.
  keyMatchesMemo.set(cert, new Map([[keyPem, ok]]));
  return ok;
}

/** ca.crt after a CA change: the new CA first, then the earlier ones that are still valid. */
export function nextBundle(currentCaPem: string, previousBundlePem: string | undefined, now: Date): string {
  const current = parseCertificates(currentCaPem) ?? [];
  const seen = new Set(current.map((c) => c.fingerprint256));
  const kept: string[] = current.map((c) => c.toString());
  for (const c of parseCertificates(previousBundlePem ?? "") ?? []) {
    if (seen.has(c.fingerprint256) || Date.parse(c.validTo) <= now.getTime()) continue;
    seen.add(c.fingerprint256);
    kept.push(c.toString());
  }
  return kept.map((p) => (p.endsWith("\n") ? p : `${p}\n`)).join("");
}

/**
 * The active leaf's identity for the reload signal: sha256 over certificate and key. Carried in
 * an annotation outside the pod template, so a new certificate never rolls the StatefulSet.
 */
export function certificateHash(certPem: string, keyPem: string): string {
  return createHash("sha256").update(certPem).update("\0").update(keyPem).digest("hex");
}
