import { KubeClient, loadKubeConfig } from "../runtime/client.js";
import { asStringList } from "../runtime/configvalues.js";
import { startProbeServer } from "../runtime/http.js";
import { createLogger } from "../runtime/log.js";
import { Manager } from "../runtime/manager.js";
import type { TargetDefinition } from "../runtime/target.js";
import { loadConfigFile } from "./config.js";
import { loadTarget } from "./targets.js";

export const runHelp = `Usage: platform-operator run --config FILE [--kubeconfig FILE] [--targets a,b]

Runs the controllers of the targets enabled in the configuration file, each with its own manager:
its own cache, work queue, Lease (<leaseName>-<target>) and backend credentials.

  --config FILE      process configuration (YAML); backend addresses and credentials live here
                     or in the environment (\${VAR} is expanded), never in the objects
  --kubeconfig FILE  cluster to run against; default: $KUBECONFIG, then the in-cluster
                     ServiceAccount, then ~/.kube/config
  --targets a,b      run only these of the configured targets

Targets: vault. Reserved, not implemented yet: openbao, gitlab, harbor, sonarqube.`;

export interface RunningOperator {
  managers: Manager[];
  probePort: number;
  stop(): Promise<void>;
}

export interface RunOptions {
  configPath: string;
  kubeconfig?: string;
  targets?: string[];
  /** Overrides the probe port of the file (0 picks a free one). */
  probePort?: number;
  /** Where JSON log lines go (stdout by default). */
  logStream?: NodeJS.WritableStream;
}

/** Starts everything and returns once the managers are started (as leader or standby). */
export async function startOperator(opts: RunOptions): Promise<RunningOperator> {
  const config = loadConfigFile(opts.configPath);
  const log = createLogger({ level: config.logLevel, stream: opts.logStream });
  const names = opts.targets ?? [...config.targets.keys()];
  const setups: { def: TargetDefinition; manager: Manager }[] = [];
  for (const name of names) {
    if (!config.targets.has(name))
      throw new Error(`--targets: "${name}" has no section under targets in ${opts.configPath}`);
    const def = await loadTarget(name);
    const section = config.targets.get(name);
    const field = `targets.${name}`;
    const parsed = def.parseConfig(section, field);
    const raw = (section ?? {}) as Record<string, unknown>;
    const namespaces =
      raw["namespaces"] === undefined ? undefined : asStringList(raw["namespaces"], `${field}.namespaces`);
    const client = new KubeClient(loadKubeConfig(opts.kubeconfig), `platform-operator/${name}`);
    const manager = new Manager({
      target: name,
      client,
      log: log.child({ target: name }),
      namespaces,
      leaderElection: config.leaderElection.enabled
        ? { namespace: config.leaderElection.namespace, leaseName: config.leaderElection.leaseName }
        : undefined,
    });
    await def.setup(manager, parsed);
    setups.push({ def, manager });
  }
  const managers = setups.map((s) => s.manager);
  const probes = await startProbeServer(
    { ready: () => managers.every((m) => m.ready), healthy: () => true },
    opts.probePort ?? config.probes.port,
    config.probes.host,
  );
  log.info({ targets: names, probePort: probes.port }, "operator starting");
  // Each manager waits for its own Lease; one target's standby must not hold up another's start.
  for (const m of managers) {
    void m
      .start()
      .catch((e) => log.error({ target: m.target, err: (e as Error).message }, "manager failed to start"));
  }
  return {
    managers,
    probePort: probes.port,
    async stop() {
      await Promise.all(managers.map((m) => m.stop()));
      await Promise.all(setups.map((s) => s.def.close?.()));
      for (const m of managers) m.client.close();
      await probes.close();
    },
  };
}
