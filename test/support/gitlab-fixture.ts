import type { KubeClient } from "../../src/runtime/client.js";
import {
  fixtureChartsDir,
  fixtureVersions,
  installGitLabCrds,
  provisionSharedSecretsAccount,
  type RunningGitLab,
  startGitLabTarget,
} from "./gitlab.js";

/** The gitlab target running over a copy of the fixture charts; `stop` ends it and removes the copy. */
export interface FixtureGitLab {
  op: RunningGitLab;
  charts: { dir: string; remove(): void };
  stop(): Promise<void>;
}

/**
 * What most GitLabCore suites set up first: the definitions installed, the hooks' ServiceAccount
 * provisioned when asked, the fixture charts (all versions, or those `versions` keeps) copied, and the
 * gitlab target started on `ns` with `settings`.
 */
export async function startFixtureGitLab(
  client: KubeClient,
  kubeconfigPath: string,
  ns: string,
  opts: {
    /** Also install the Gateway API definitions (installGitLabCrds); default true. */
    gatewayApi?: boolean;
    /** The shared-secrets hook's ServiceAccount to provision with its Role, when given. */
    hookAccount?: string;
    versions?: (version: string) => boolean;
    settings?: Record<string, unknown>;
  } = {},
): Promise<FixtureGitLab> {
  await installGitLabCrds(client, opts.gatewayApi ?? true);
  if (opts.hookAccount) await provisionSharedSecretsAccount(client, ns, opts.hookAccount);
  const keep = opts.versions;
  const charts = fixtureChartsDir(
    keep ? fixtureVersions().filter((v) => keep(v.version)) : fixtureVersions(),
  );
  let op: RunningGitLab;
  try {
    op = await startGitLabTarget(kubeconfigPath, ns, charts.dir, opts.settings ?? {});
  } catch (e) {
    charts.remove();
    throw e;
  }
  return {
    op,
    charts,
    async stop() {
      await op.stop();
      charts.remove();
    },
  };
}
