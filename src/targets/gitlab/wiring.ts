import type { GitLabCore } from "../../apis/gitlabcore.js";
import type { Manager } from "../../runtime/manager.js";
import type { GitLabTargetConfig } from "./config.js";
import type { ReleaseSource, VersionPolicy } from "./reconciler.js";

// Glue between the reconciler and the renderer (render/, charts/) and the version and values logic
// (version/, values/). Until those land, Static versions resolve here and the values are the
// resource's free-form ones; the renderer must be given (see GitLabTargetHooks).

const parse = (v: string): [number, number, number] | undefined => {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
};
const cmp = (a: [number, number, number], b: [number, number, number]) =>
  a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

export const defaultVersionPolicy: VersionPolicy = {
  resolve({ spec, available, deployed, versionRefValue }) {
    if (spec.type !== "Static")
      return { error: `spec.version.type ${spec.type} is not supported yet`, reason: "VersionUnresolved" };
    const raw = (versionRefValue ?? spec.version ?? "").trim();
    const v = parse(raw);
    if (!v) return { error: `spec.version: "${raw}" is not a semantic version`, reason: "VersionUnresolved" };
    const version = v.join(".");
    const d = deployed ? parse(deployed) : undefined;
    if (d && cmp(v, d) < 0)
      return {
        error: `spec.version: ${version} is below the deployed ${deployed}; downgrades are refused`,
        reason: "VersionUnresolved",
      };
    if (!available.includes(version))
      return { error: `spec.version: chart ${version} is not available`, reason: "VersionUnresolved" };
    return { version };
  },
  path(from, to, available) {
    const f = parse(from);
    const t = parse(to);
    if (!f || !t) return { error: `cannot step from ${from} to ${to}`, reason: "MissingIntermediateChart" };
    const minors = new Map<string, [number, number, number]>();
    for (const a of available) {
      const p = parse(a);
      if (!p || cmp(p, f) <= 0 || cmp(p, t) > 0) continue;
      const k = `${p[0]}.${p[1]}`;
      const best = minors.get(k);
      if (!best || cmp(p, best) > 0) minors.set(k, p);
    }
    const steps = [...minors.values()].sort(cmp).map((p) => p.join("."));
    if (steps.at(-1) !== to) steps.push(to);
    return { steps };
  },
};

export function defaultValues(gl: GitLabCore, _chartVersion: string, _config: GitLabTargetConfig): unknown {
  return gl.spec.chart?.values ?? {};
}

export function defaultReleaseSource(_manager: Manager): ReleaseSource {
  throw new Error("gitlab target: no chart renderer is wired in this build");
}
