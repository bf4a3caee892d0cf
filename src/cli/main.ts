#!/usr/bin/env node
import { parseArgs } from "node:util";
import { ConfigError } from "../runtime/target.js";
import { waitForSignal } from "./signals.js";
import { packageVersion } from "./version.js";

// Each command's module is imported when that command runs: `version` or `validate` never load the
// runtime, and `run` never loads the CRD builder (see the README's memory figures).

const mainHelp = `Usage: platform-operator <command> [options]

A Kubernetes operator for OpenBaoCluster and OpenBaoRestore (openbao.org/v1alpha1), GitLabCore
(apps.gitlab.com/v2alpha1) and VaultSeed (ohmlab.fr/v1alpha1).

Commands:
  run       run the controllers of the configured targets against a cluster
  crds      print (or write) the CustomResourceDefinitions
  argocd    print (or write) the Argo CD health checks and actions, as an argocd-cm patch
  dashboards print (or write) the Grafana dashboards of the operator and each target
  validate  check manifests offline (files, folders or stdin)
  version   print the version
  node-options  print V8 heap flags for this container's memory limit (for NODE_OPTIONS)
  executor  run one OpenBao backup or restore, as its Job does (settings from env)
  dev       the local default: a local control plane and OpenBao with the samples applied

Run 'platform-operator <command> --help' for a command's options.`;

const versionHelp = `Usage: platform-operator version

Prints the operator's version.`;

function fail(message: string): never {
  process.stderr.write(`platform-operator: ${message}\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const wantsHelp = rest.includes("--help") || rest.includes("-h");
  switch (command) {
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(`${mainHelp}\n`);
      return command === undefined ? 2 : 0;
    case "version":
    case "--version":
      if (wantsHelp) return help(versionHelp);
      process.stdout.write(`platform-operator ${packageVersion()}\n`);
      return 0;
    case "node-options": {
      const { nodeOptionsCommand, nodeOptionsHelp } = await import("./heap.js");
      if (wantsHelp) return help(nodeOptionsHelp);
      return nodeOptionsCommand();
    }
    case "crds": {
      const { crdsCommand, crdsHelp } = await import("./crds.js");
      if (wantsHelp) return help(crdsHelp);
      const { values } = parseArgs({
        args: rest,
        options: { write: { type: "string" }, reference: { type: "string" } },
        strict: true,
      });
      return crdsCommand(values.write, values.reference);
    }
    case "dashboards": {
      const { dashboardsCommand, dashboardsHelp } = await import("./dashboards.js");
      if (wantsHelp) return help(dashboardsHelp);
      const { values } = parseArgs({ args: rest, options: { write: { type: "string" } }, strict: true });
      return dashboardsCommand(values.write);
    }
    case "argocd": {
      const { argocdCommand, argocdHelp } = await import("./argocd.js");
      if (wantsHelp) return help(argocdHelp);
      const { values } = parseArgs({
        args: rest,
        options: { scripts: { type: "string" }, write: { type: "string" } },
        strict: true,
      });
      return argocdCommand(values.scripts, values.write);
    }
    case "validate": {
      const { validateCommand, validateHelp } = await import("./validate.js");
      if (wantsHelp) return help(validateHelp);
      const { positionals, values } = parseArgs({
        args: rest,
        options: {
          charts: { type: "string" },
          config: { type: "string" },
          "admission-policies": { type: "boolean" },
          "operator-namespace": { type: "string" },
        },
        allowPositionals: true,
        strict: true,
      });
      return validateCommand(positionals, undefined, {
        charts: values.charts,
        config: values.config,
        admissionPolicies: values["admission-policies"],
        operatorNamespace: values["operator-namespace"],
      });
    }
    case "run": {
      (await import("./v8-flags.js")).applyRuntimeV8Flags();
      const { runHelp, startOperator } = await import("./run.js");
      if (wantsHelp) return help(runHelp);
      const { values } = parseArgs({
        args: rest,
        options: { config: { type: "string" }, kubeconfig: { type: "string" }, targets: { type: "string" } },
        strict: true,
      });
      if (!values.config) fail("run: --config FILE is required (see 'platform-operator run --help')");
      const op = await startOperator({
        configPath: values.config,
        kubeconfig: values.kubeconfig,
        targets: values.targets
          ?.split(",")
          .map((t) => t.trim())
          .filter(Boolean),
      });
      await waitForSignal();
      await op.stop();
      return 0;
    }
    case "executor": {
      const { executorCommand, executorHelp } = await import("./executor.js");
      if (wantsHelp) return help(executorHelp);
      const { values } = parseArgs({
        args: rest,
        options: {
          "result-file": { type: "string" },
          "ca-file": { type: "string" },
          "token-file": { type: "string" },
          "jwt-file": { type: "string" },
          "credentials-dir": { type: "string" },
          "web-identity-token-file": { type: "string" },
          "store-wait-seconds": { type: "string" },
        },
        strict: true,
      });
      return executorCommand({
        storeWaitSeconds: values["store-wait-seconds"],
        resultFile: values["result-file"],
        caFile: values["ca-file"],
        tokenFile: values["token-file"],
        jwtFile: values["jwt-file"],
        credentialsDir: values["credentials-dir"],
        webIdentityTokenFile: values["web-identity-token-file"],
      });
    }
    case "dev": {
      const { devCommand, devHelp } = await import("./dev.js");
      if (wantsHelp) return help(devHelp);
      return devCommand(rest);
    }
    default:
      fail(`unknown command "${command}" (see 'platform-operator --help')`);
  }
}

function help(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  // Exit once stdout has taken everything written to it: process.exit() at once can cut a large
  // output (the CRDs are ~170 KB) written to a pipe whose reader is slow.
  (code) => process.stdout.write("", () => process.exit(code)),
  (e: unknown) => {
    const message = e instanceof ConfigError || e instanceof Error ? e.message : String(e);
    fail(message);
  },
);
