import { readFileSync } from "node:fs";
import { KubeClient, loadKubeConfig } from "../runtime/client.js";
import { type RunningServer, startMetricsServer, startProbeServer } from "../runtime/http.js";
import { createLogger } from "../runtime/log.js";
import { Manager } from "../runtime/manager.js";
import { createCertificateAuthority, issueServerCertificate } from "../runtime/pki/x509.js";
import { MetricsAuthorizer } from "../runtime/secure-metrics.js";
import type { TargetDefinition } from "../runtime/target.js";
import { ConfigError } from "../runtime/target.js";
import { Webhook } from "../runtime/webhook.js";
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

Targets: vault, openbao (OpenBaoCluster). Reserved, not implemented yet: gitlab, harbor, sonarqube.`;

/** As long as the chart's own self-signed metrics certificate: the process restarts far sooner. */
const METRICS_CERT_VALIDITY_MS = 3650 * 24 * 3_600_000;

export interface RunningOperator {
  managers: Manager[];
  probePort: number;
  /** The port of the separate metrics server, when the config has a metrics section. */
  metricsPort?: number;
  /** The running webhook, when the config has a webhook section. */
  webhook?: Webhook;
  stop(): Promise<void>;
}

export interface RunOptions {
  configPath: string;
  kubeconfig?: string;
  targets?: string[];
  /** Overrides the probe port of the file (0 picks a free one). */
  probePort?: number;
  /** Overrides webhook.port of the file (0 picks a free one). */
  webhookPort?: number;
  /** Overrides metrics.port of the file (0 picks a free one). */
  metricsPort?: number;
  /** Where JSON log lines go (stdout by default). */
  logStream?: NodeJS.WritableStream;
  /**
   * Called when a target's manager loses its Lease. The default stops the other targets (their
   * Leases released, at most LOST_LEASE_STOP_MS) and exits with status 1, so the pod restarts as
   * a standby instead of running on without a Lease.
   */
  onLostLeadership?: (target: string) => void;
}

const LOST_LEASE_STOP_MS = 5_000;

/** Starts everything and returns once the managers are started (as leader or standby). */
export async function startOperator(opts: RunOptions): Promise<RunningOperator> {
  const config = loadConfigFile(opts.configPath);
  const log = createLogger({ level: config.logLevel, stream: opts.logStream });
  let probes: Awaited<ReturnType<typeof startProbeServer>> | undefined;
  const names = opts.targets ?? [...config.targets.keys()];
  const setups: { def: TargetDefinition; manager: Manager }[] = [];
  let metrics: RunningServer | undefined;
  let metricsClient: KubeClient | undefined;
  let webhook: Webhook | undefined;
  let webhookClient: KubeClient | undefined;
  let stopping: Promise<void> | undefined;
  const stopAll = () => {
    stopping ??= (async () => {
      // The webhook goes first: a stopped target's kinds must not be admitted unchecked.
      await webhook?.stop();
      webhookClient?.close();
      await Promise.all(setups.map((s) => s.manager.stop()));
      await Promise.all(setups.map((s) => s.def.close?.()));
      for (const s of setups) s.manager.client.close();
      await probes?.close();
      await metrics?.close();
      metricsClient?.close();
    })();
    return stopping;
  };
  const lostLeadership = (target: string) => {
    log.error({ target }, "leadership lost: the operator stops and exits with status 1");
    if (opts.onLostLeadership) return opts.onLostLeadership(target);
    const timer = setTimeout(() => process.exit(1), LOST_LEASE_STOP_MS);
    void stopAll().finally(() => {
      clearTimeout(timer);
      process.exit(1);
    });
  };
  for (const name of names) {
    if (!config.targets.has(name))
      throw new Error(`--targets: "${name}" has no section under targets in ${opts.configPath}`);
    const def = await loadTarget(name);
    const { section, namespaces } = config.targets.get(name)!;
    const parsed = def.parseConfig(section, `targets.${name}`);
    const client = new KubeClient(loadKubeConfig(opts.kubeconfig), `platform-operator/${name}`, {
      rateLimit: config.client.rateLimit,
      http2: config.client.http2,
    });
    const manager = new Manager({
      target: name,
      client,
      log: log.child({ target: name }),
      namespaces,
      watchScope: config.client.watchScope,
      clusterWatchFrom: config.client.clusterWatchFrom,
      leaderElection: config.leaderElection.enabled
        ? { namespace: config.leaderElection.namespace, leaseName: config.leaderElection.leaseName }
        : undefined,
      onLostLeadership: () => lostLeadership(name),
    });
    await def.setup(manager, parsed);
    setups.push({ def, manager });
  }
  const managers = setups.map((s) => s.manager);
  if (config.webhook) {
    const w = config.webhook;
    webhookClient = new KubeClient(loadKubeConfig(opts.kubeconfig), "platform-operator/webhook");
    webhook = new Webhook({
      port: opts.webhookPort ?? w.port,
      host: w.host,
      observeOnly: w.observeOnly,
      checkEveryMs: w.renewCheckEveryMs,
      certificate: w.files
        ? { kind: "files", ...w.files }
        : {
            kind: "secret",
            namespace: w.secret!.namespace,
            secretName: w.secret!.name,
            names: w.secret!.names,
            webhookConfiguration: w.configurationName,
          },
      client: webhookClient,
      log: log.child({ component: "webhook" }),
      // Looked up per request: a kind is checked only while its target's manager runs.
      checkFor: (group, kind) =>
        managers.find((m) => m.running && m.admission.find(group, kind))?.admission.find(group, kind),
    });
    await webhook.start();
  }
  const stuckAfterMs = config.probes.stuckAfterMs;
  probes = await startProbeServer(
    {
      readinessProblems: () => [
        ...managers.flatMap((m) => m.readinessProblems()),
        ...(webhook?.readinessProblems() ?? []),
      ],
      livenessProblems: () => managers.flatMap((m) => m.livenessProblems(stuckAfterMs)),
    },
    opts.probePort ?? config.probes.port,
    config.probes.host,
    { serveMetrics: config.metrics === undefined },
  );
  if (config.metrics && config.metrics.enabled !== false) {
    const m = config.metrics;
    if (m.secure)
      metricsClient = new KubeClient(loadKubeConfig(opts.kubeconfig), "platform-operator/metrics-auth");
    metrics = await startMetricsServer({
      port: opts.metricsPort ?? m.port,
      host: m.host,
      authorizer: metricsClient && new MetricsAuthorizer(metricsClient, { log }),
      tls:
        m.certFile && m.keyFile
          ? { cert: readPem(m.certFile, "metrics.certFile"), key: readPem(m.keyFile, "metrics.keyFile") }
          : m.selfSigned
            ? selfSignedMetricsCertificate()
            : undefined,
    });
  }
  log.info(
    {
      targets: names,
      probePort: probes.port,
      metricsPort: metrics?.port,
      metricsSecure: config.metrics?.secure,
    },
    "operator starting",
  );
  // Each manager waits for its own Lease; one target's standby must not hold up another's start.
  for (const m of managers) {
    void m
      .start()
      .catch((e) => log.error({ target: m.target, err: (e as Error).message }, "manager failed to start"));
  }
  return {
    managers,
    probePort: probes.port,
    metricsPort: metrics?.port,
    ...(webhook ? { webhook } : {}),
    stop: stopAll,
  };
}

/**
 * A certificate made at start and kept in memory only: nothing secret in the manifests, and every
 * render of them the same. Scrapers authenticate with their token and do not verify this one.
 */
function selfSignedMetricsCertificate(): { cert: string; key: string } {
  const now = new Date();
  const ca = createCertificateAuthority("platform-operator metrics", now, METRICS_CERT_VALIDITY_MS);
  const names = [process.env["POD_NAME"], "localhost"].filter((n): n is string => Boolean(n));
  const leaf = issueServerCertificate(ca, {
    commonName: names[0]!,
    names,
    now,
    validityMs: METRICS_CERT_VALIDITY_MS,
  });
  return { cert: leaf.certPem, key: leaf.keyPem };
}

function readPem(path: string, field: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(field, `cannot read ${path}: ${(e as Error).message}`);
  }
}
