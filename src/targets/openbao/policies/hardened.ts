/**
 * What profile Hardened refuses beyond its baseline (rules.ts' hardened-baseline), as upstream 0.2–0.5
 * does: credentials written inline into the spec (which anyone who can read the object reads), a
 * transit seal reached without https, TLS verification switched off, egress rules that open more
 * than one way out, and pod security settings that weaken the pods. Each rule names its field.
 *
 * These rules are part of the validate-openbaocluster policy AND of the operator's webhook
 * (admission.ts), so a cluster installed without the policies refuses the same objects.
 */

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const at = (v: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((cur, k) => (isObject(cur) ? cur[k] : undefined), v);
const str = (v: unknown, path: string): string => {
  const s = at(v, path);
  return typeof s === "string" ? s : "";
};
const hardened = (o: unknown) => str(o, "spec.profile") === "Hardened";
const HARDENED_CEL = `object.spec.?profile.orValue("") == "Hardened"`;
const optional = (path: string) => path.split(".").join(".?");

export interface HardenedRule {
  id: string;
  /** The field refused, as the webhook reports it. */
  field: string;
  message: string;
  /** CEL: true admits (non-Hardened objects always). */
  cel: string;
  admits(input: { object: unknown }): boolean;
}

/** An inline credential: refused when set to anything but "". */
const inline = (id: string, path: string): HardenedRule => ({
  id,
  field: path,
  message: `profile Hardened: ${path} may not be written into the spec (anyone who reads the object reads it); put it in the Secret spec.unseal.credentialsSecretRef names.`,
  cel: `!(${HARDENED_CEL}) || object.${optional(path)}.orValue("") == ""`,
  admits: ({ object: o }) => !hardened(o) || str(o, path) === "",
});

/** A switch that turns TLS verification off. */
const skipVerify = (id: string, path: string): HardenedRule => ({
  id,
  field: path,
  message: `profile Hardened: ${path} may not be true; give the CA instead of skipping verification.`,
  cel: `!(${HARDENED_CEL}) || object.${optional(path)}.orValue(false) != true`,
  admits: ({ object: o }) => !hardened(o) || at(o, path) !== true,
});

// ---------------------------------------------------------------- egress

/** A label selector that selects something in particular (not the empty selector, which selects all). */
const selects = (s: unknown): boolean => {
  if (!isObject(s)) return false;
  const labels = s["matchLabels"];
  const exprs = s["matchExpressions"];
  return (isObject(labels) && Object.keys(labels).length > 0) || (Array.isArray(exprs) && exprs.length > 0);
};
const selectsCel = (s: string) =>
  `(size(${s}.?matchLabels.orValue({})) > 0 || size(${s}.?matchExpressions.orValue([])) > 0)`;

/** An ipBlock wide open (/0) or onto this host or link-local addresses. */
const BROAD_CIDR = /(\/0$)|(^127\.)|(^169\.254\.)|(^::1\/)|(^fe80:)/i;
const broadCidrCel = (c: string) =>
  `${c}.matches("(/0$)|(^127\\\\.)|(^169\\\\.254\\\\.)|(^::1/)|(^[fF][eE]80:)")`;

function narrowPeer(p: unknown): boolean {
  if (!isObject(p)) return false;
  const ns = p["namespaceSelector"];
  const pod = p["podSelector"];
  const block = p["ipBlock"];
  const cidr = isObject(block) && typeof block["cidr"] === "string" ? block["cidr"] : undefined;
  const names =
    (ns !== undefined && selects(ns)) ||
    (pod !== undefined && selects(pod)) ||
    (cidr !== undefined && !BROAD_CIDR.test(cidr));
  return (
    names &&
    (ns === undefined || selects(ns)) &&
    (pod === undefined || selects(pod) || (ns !== undefined && selects(ns))) &&
    (block === undefined || (cidr !== undefined && !BROAD_CIDR.test(cidr)))
  );
}
const narrowPeerCel = (p: string) =>
  `((has(${p}.namespaceSelector) && ${selectsCel(`${p}.namespaceSelector`)}) || (has(${p}.podSelector) && ${selectsCel(`${p}.podSelector`)}) || (has(${p}.ipBlock) && !${broadCidrCel(`${p}.ipBlock.cidr`)})) && (!has(${p}.namespaceSelector) || ${selectsCel(`${p}.namespaceSelector`)}) && (!has(${p}.podSelector) || ${selectsCel(`${p}.podSelector`)} || (has(${p}.namespaceSelector) && ${selectsCel(`${p}.namespaceSelector`)})) && (!has(${p}.ipBlock) || !${broadCidrCel(`${p}.ipBlock.cidr`)})`;

function narrowRule(r: unknown): boolean {
  if (!isObject(r)) return false;
  const to = r["to"];
  const ports = r["ports"];
  return (
    Array.isArray(to) &&
    to.length > 0 &&
    Array.isArray(ports) &&
    ports.length > 0 &&
    ports.every((p) => isObject(p) && p["port"] !== undefined) &&
    to.every(narrowPeer)
  );
}

// ---------------------------------------------------------------- security context

const SC = "spec.securityContext";
/** The SELinux types Pod Security's baseline allows a pod; any other (spc_t: unconfined) weakens it. */
const SELINUX_TYPES = ["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"];

export const HARDENED_RULES: readonly HardenedRule[] = [
  inline("hardened-inline-transit-token", "spec.unseal.transit.token"),
  inline("hardened-inline-awskms-secret-key", "spec.unseal.awskms.secretKey"),
  inline("hardened-inline-awskms-session-token", "spec.unseal.awskms.sessionToken"),
  inline("hardened-inline-azure-client-secret", "spec.unseal.azureKeyVault.clientSecret"),
  inline("hardened-inline-pkcs11-pin", "spec.unseal.pkcs11.pin"),
  {
    id: "hardened-transit-https",
    field: "spec.unseal.transit.address",
    message:
      "profile Hardened: spec.unseal.transit.address must start with https://; the seal's token and keys cross it.",
    cel: `!(${HARDENED_CEL}) || object.spec.?unseal.?transit.?address.orValue("") == "" || object.spec.unseal.transit.address.startsWith("https://")`,
    admits: ({ object: o }) => {
      const a = str(o, "spec.unseal.transit.address");
      return !hardened(o) || a === "" || a.startsWith("https://");
    },
  },
  skipVerify("hardened-backup-skip-verify", "spec.backup.target.insecureSkipVerify"),
  skipVerify(
    "hardened-servicemonitor-skip-verify",
    "spec.observability.metrics.serviceMonitor.tlsConfig.insecureSkipVerify",
  ),
  {
    id: "hardened-egress-scope",
    field: "spec.network.egressRules",
    message:
      "profile Hardened: each of spec.network.egressRules needs ports (each with a port) and peers in `to`, each naming its peers: a non-empty namespaceSelector or podSelector, or an ipBlock that is not /0, loopback or link-local.",
    cel: `!(${HARDENED_CEL}) || object.spec.?network.?egressRules.orValue([]).all(r, size(r.?to.orValue([])) > 0 && size(r.?ports.orValue([])) > 0 && r.ports.all(p, has(p.port)) && r.to.all(peer, ${narrowPeerCel("peer")}))`,
    admits: ({ object: o }) => {
      const rules = at(o, "spec.network.egressRules");
      return !hardened(o) || !Array.isArray(rules) || rules.every(narrowRule);
    },
  },
  {
    id: "hardened-run-as-non-root",
    field: `${SC}.runAsNonRoot`,
    message: `profile Hardened: ${SC}.runAsNonRoot may not be false.`,
    cel: `!(${HARDENED_CEL}) || object.spec.?securityContext.?runAsNonRoot.orValue(true) == true`,
    admits: ({ object: o }) => !hardened(o) || at(o, `${SC}.runAsNonRoot`) !== false,
  },
  {
    id: "hardened-seccomp",
    field: `${SC}.seccompProfile.type`,
    message: `profile Hardened: ${SC}.seccompProfile.type may not be Unconfined.`,
    cel: `!(${HARDENED_CEL}) || object.spec.?securityContext.?seccompProfile.?type.orValue("") != "Unconfined"`,
    admits: ({ object: o }) => !hardened(o) || str(o, `${SC}.seccompProfile.type`) !== "Unconfined",
  },
  {
    id: "hardened-root-ids",
    field: SC,
    message: `profile Hardened: ${SC} may not set runAsUser, runAsGroup or fsGroup to 0, nor list group 0 in supplementalGroups.`,
    cel: `!(${HARDENED_CEL}) || (${["runAsUser", "runAsGroup", "fsGroup"].map((k) => `object.spec.?securityContext.?${k}.orValue(1) != 0`).join(" && ")} && object.spec.?securityContext.?supplementalGroups.orValue([]).all(g, g != 0))`,
    admits: ({ object: o }) => {
      if (!hardened(o)) return true;
      const groups = at(o, `${SC}.supplementalGroups`);
      return (
        ["runAsUser", "runAsGroup", "fsGroup"].every((k) => at(o, `${SC}.${k}`) !== 0) &&
        (!Array.isArray(groups) || !groups.includes(0))
      );
    },
  },
  {
    id: "hardened-sysctls",
    field: `${SC}.sysctls`,
    message: `profile Hardened: ${SC}.sysctls may not be set.`,
    cel: `!(${HARDENED_CEL}) || size(object.spec.?securityContext.?sysctls.orValue([])) == 0`,
    admits: ({ object: o }) => {
      const s = at(o, `${SC}.sysctls`);
      return !hardened(o) || !Array.isArray(s) || s.length === 0;
    },
  },
  {
    id: "hardened-apparmor",
    field: `${SC}.appArmorProfile.type`,
    message: `profile Hardened: ${SC}.appArmorProfile.type may not be Unconfined.`,
    cel: `!(${HARDENED_CEL}) || object.spec.?securityContext.?appArmorProfile.?type.orValue("") != "Unconfined"`,
    admits: ({ object: o }) => !hardened(o) || str(o, `${SC}.appArmorProfile.type`) !== "Unconfined",
  },
  {
    id: "hardened-selinux",
    field: `${SC}.seLinuxOptions`,
    message: `profile Hardened: ${SC}.seLinuxOptions may not set user or role, and its type may only be one of ${SELINUX_TYPES.filter((t) => t !== "").join(", ")}.`,
    cel: `!(${HARDENED_CEL}) || (object.spec.?securityContext.?seLinuxOptions.?user.orValue("") == "" && object.spec.?securityContext.?seLinuxOptions.?role.orValue("") == "" && object.spec.?securityContext.?seLinuxOptions.?type.orValue("") in ${JSON.stringify(SELINUX_TYPES)})`,
    admits: ({ object: o }) =>
      !hardened(o) ||
      (str(o, `${SC}.seLinuxOptions.user`) === "" &&
        str(o, `${SC}.seLinuxOptions.role`) === "" &&
        SELINUX_TYPES.includes(str(o, `${SC}.seLinuxOptions.type`))),
  },
  {
    id: "hardened-windows-options",
    field: `${SC}.windowsOptions`,
    message: `profile Hardened: ${SC}.windowsOptions may not be set.`,
    cel: `!(${HARDENED_CEL}) || !has(object.spec.securityContext) || !has(object.spec.securityContext.windowsOptions)`,
    admits: ({ object: o }) => !hardened(o) || at(o, `${SC}.windowsOptions`) === undefined,
  },
];
