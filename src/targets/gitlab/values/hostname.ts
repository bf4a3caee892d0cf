// The hosts of a GitLab instance from spec.hostname. The domain is the parent of the hostname (its
// first label stripped) so siblings sit next to it: gitlab.example.com → example.com, with
// registry.example.com and kas.example.com. An apex hostname (a registrable domain itself, such as
// example.com or example.co.uk) is its own domain: stripping a label would leave a public suffix,
// where no sibling host can be ours. Private suffixes of the list count (gitlab-me.github.io is an
// apex), since a name under them belongs to its registrant just the same.
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { parse } from "tldts";

export interface GitLabHosts {
  /** global.hosts.domain */
  domain: string;
  gitlab: string;
  registry: string;
  kas: string;
}

export type HostsResult = { ok: true; hosts: GitLabHosts } | { ok: false; message: string };

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Splits spec.hostname into the chart's hosts, or says what is wrong with it (never throws). */
export function hostsOf(hostname: unknown): HostsResult {
  const bad = (message: string): HostsResult => ({ ok: false, message });
  if (typeof hostname !== "string" || hostname === "")
    return bad("must be a host name such as gitlab.example.com");
  if (hostname.length > 253) return bad("is longer than 253 characters");
  if (hostname.endsWith(".")) return bad("must not end with a dot: write the name without the root label");
  if (isIP(hostname) || isIP(hostname.replace(/^\[|\]$/g, "")))
    return bad(
      "is an IP address: GitLab needs a DNS name, whose domain also names the registry and KAS hosts",
    );
  if ([...hostname].some((c) => c.charCodeAt(0) > 0x7f)) {
    const ascii = domainToASCII(hostname);
    return bad(
      ascii
        ? `must be ASCII: write the internationalized name in its punycode form, ${ascii}`
        : "is not a valid internationalized host name",
    );
  }
  if (hostname !== hostname.toLowerCase()) return bad("must be lower case");
  const labels = hostname.split(".");
  const wrong = labels.find((l) => !LABEL.test(l));
  if (wrong !== undefined)
    return bad(
      wrong === ""
        ? "has an empty label (two dots in a row)"
        : `has an invalid label ${JSON.stringify(wrong.slice(0, 63))}: letters, digits and inner hyphens only, at most 63`,
    );
  if (labels.length < 2)
    return bad("is a single label: give a fully qualified name such as gitlab.example.com");
  if (/^[0-9]+$/.test(labels[labels.length - 1]!))
    return bad("ends in a numeric label, which no top-level domain is");

  const info = parse(hostname, { allowPrivateDomains: true });
  if (info.domain === null || info.publicSuffix === hostname)
    return bad("is a public suffix, under which names belong to others: use a name inside your own domain");
  const apex = info.domain === hostname;
  const domain = apex ? hostname : labels.slice(1).join(".");
  return {
    ok: true,
    hosts: { domain, gitlab: hostname, registry: `registry.${domain}`, kas: `kas.${domain}` },
  };
}

/**
 * The chart's hosts from spec.domain, the newer form: every component is a subdomain of it (GitLab at
 * gitlab.<domain>). The domain passes the same checks as a hostname, the public-suffix one included,
 * since hosts under a public suffix would belong to others.
 */
export function domainHostsOf(domain: unknown): HostsResult {
  const checked = hostsOf(domain);
  if (!checked.ok) return checked;
  const d = domain as string;
  return {
    ok: true,
    hosts: { domain: d, gitlab: `gitlab.${d}`, registry: `registry.${d}`, kas: `kas.${d}` },
  };
}
