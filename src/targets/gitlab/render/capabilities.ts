import type { KubeClient } from "../../../runtime/client.js";
import type { Capabilities } from "./types.js";

// The shape render.ts accepts on helm's command line.
const SAFE = /^[A-Za-z0-9][A-Za-z0-9.-]*(\/[A-Za-z0-9.-]+){1,2}$/;

/**
 * The cluster's capabilities as helm's `.Capabilities` would see them when installing: the server
 * version for `--kube-version`, and every served group-version plus `<group-version>/<Kind>` for
 * `--api-versions` (the forms charts test with `.Capabilities.APIVersions.Has`). The runtime's
 * discovery re-reads the group list on each call, so a group-version installed since (the Gateway
 * API, say) is seen on the next pass; a group-version whose discovery fails is left out, as helm
 * leaves it out.
 */
export async function capabilitiesFromDiscovery(client: KubeClient): Promise<Capabilities> {
  const [version, resources] = await Promise.all([
    client.request<{ gitVersion?: string }>({ method: "GET", path: "/version" }),
    client.resources.all(),
  ]);
  if (!version?.gitVersion) throw new Error("discovery: /version answered without gitVersion");
  const apiVersions = new Set<string>();
  const clusterScoped = new Set<string>();
  for (const r of resources) {
    const gv = r.group ? `${r.group}/${r.version}` : r.version;
    // Whatever a CRD author chose must not break every render: odd names are left out, not passed on.
    if (!SAFE.test(`${gv}/${r.kind}`)) continue;
    apiVersions.add(gv);
    apiVersions.add(`${gv}/${r.kind}`);
    if (!r.namespaced) clusterScoped.add(`${gv}/${r.kind}`);
  }
  return {
    kubeVersion: version.gitVersion,
    apiVersions: [...apiVersions].sort(),
    clusterScoped: [...clusterScoped].sort(),
  };
}
