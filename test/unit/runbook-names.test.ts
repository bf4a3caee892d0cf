import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { GitLabCoreCondition, GitLabCorePhases, GitLabCoreReason } from "../../src/apis/gitlabcore-names.js";
import {
  BlueGreenPhases,
  ClusterPhases,
  OpenBaoClusterCondition,
  OpenBaoClusterReason,
} from "../../src/apis/openbaocluster-names.js";
import {
  OpenBaoRestoreCondition,
  OpenBaoRestoreReason,
  RestorePhases,
} from "../../src/apis/openbaorestore-names.js";
import { VaultSeedCondition, VaultSeedReason } from "../../src/apis/vaultseed-names.js";
import { BUILTIN_METRIC, registeredMetrics } from "../support/metrics-registry.js";
import { baseMetric } from "../support/promql.js";

// The other direction of alert-runbooks: what a runbook tells its reader to look for must exist.
// An alert it names must be one the chart ships, a metric one the operator registers (with the
// labels it names), and a condition, reason or phase in a "Seen as" line one the kind can report:
// a renamed reason otherwise leaves a runbook sending people after something they never see.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const RUNBOOKS = join(ROOT, "docs/runbooks");
const RULES = join(ROOT, "deploy/chart/platform-operator/rules");

/** What each runbook's kind can show in status: condition types, reasons, phases. */
const STATUS_WORDS: Record<string, Set<string>> = {
  "openbao.md": new Set([
    ...Object.values(OpenBaoClusterCondition),
    ...Object.values(OpenBaoClusterReason),
    ...ClusterPhases,
    ...BlueGreenPhases,
    ...Object.values(OpenBaoRestoreCondition),
    ...Object.values(OpenBaoRestoreReason),
    ...RestorePhases,
  ]),
  "gitlabcore.md": new Set([
    ...Object.values(GitLabCoreCondition),
    ...Object.values(GitLabCoreReason),
    ...GitLabCorePhases,
  ]),
  "vaultseed.md": new Set([...Object.values(VaultSeedCondition), ...Object.values(VaultSeedReason)]),
  "operator.md": new Set(),
};

/** Metric families a runbook may name: the targets' own and the runtime's conventional ones. */
const METRIC =
  /^(openbao|gitlabcore|ohmlab|workqueue|controller_runtime|rest_client|leader_election)_[a-z0-9_]+$/;
/** An alert's shape: the chart names every alert Ohmlab… or OpenBao…. */
const ALERTISH = /^(Ohmlab|OpenBao)[A-Z][A-Za-z]+$/;

function alerts(): Set<string> {
  const names = new Set<string>();
  for (const f of readdirSync(RULES).filter((x) => x.endsWith(".yaml"))) {
    const doc = parse(readFileSync(join(RULES, f), "utf8")) as {
      spec: { groups: { rules: { alert?: string }[] }[] };
    };
    for (const g of doc.spec.groups) for (const r of g.rules) if (r.alert) names.add(r.alert);
  }
  return names;
}

/** Inline code spans outside fenced blocks, each with its line. */
function codeSpans(markdown: string): { code: string; line: string }[] {
  const out: { code: string; line: string }[] = [];
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (line.trimStart().startsWith("```")) fence = !fence;
    else if (!fence) for (const m of line.matchAll(/`([^`]+)`/g)) out.push({ code: m[1] ?? "", line });
  }
  return out;
}

/** The "**Seen as:**" paragraphs of a runbook. */
function seenAs(markdown: string): string[] {
  return markdown
    .split(/\n\s*\n/)
    .filter((p) => p.startsWith("**Seen as:**"))
    .map((p) => p.replace(/\s+/g, " "));
}

/** The status words of a Seen-as paragraph: a lone CamelCase span, or the Type of `Type=Status`. */
function statusWords(paragraph: string): string[] {
  const words: string[] = [];
  for (const m of paragraph.matchAll(/`([A-Z][A-Za-z]+)(=[A-Za-z]+)?`/g)) words.push(m[1] ?? "");
  return words;
}

/** Problems with one runbook against the shipped alerts, the registered metrics and its kind's words. */
function problems(
  file: string,
  markdown: string,
  known: { alerts: Set<string>; metrics: Map<string, { labels: Set<string> }>; words: Set<string> },
): string[] {
  const found: string[] = [];
  const everyKindWord = new Set(Object.values(STATUS_WORDS).flatMap((s) => [...s]));
  for (const { code } of codeSpans(markdown)) {
    const m = /^([a-z][a-z0-9_]*)(?:\{([a-z_,\s]*)\})?$/.exec(code);
    if (m && METRIC.test(m[1] ?? "")) {
      const name = baseMetric(m[1] ?? "");
      const metric = known.metrics.get(name);
      if (!metric && !BUILTIN_METRIC.test(name)) found.push(`${file}: metric ${m[1]} is not registered`);
      for (const l of (m[2] ?? "").split(",").map((x) => x.trim()))
        if (l && metric && !metric.labels.has(l)) found.push(`${file}: metric ${m[1]} has no label ${l}`);
    }
    if (ALERTISH.test(code) && !known.alerts.has(code) && !everyKindWord.has(code))
      found.push(`${file}: ${code} is neither a shipped alert nor a condition or reason`);
  }
  for (const p of seenAs(markdown))
    for (const w of statusWords(p))
      if (!known.alerts.has(w) && !known.words.has(w))
        found.push(
          `${file}: "Seen as" names ${w}, which is no alert, condition, reason or phase of its kind`,
        );
  return found;
}

describe("runbook names", () => {
  let metrics: Map<string, { labels: Set<string> }>;
  const shipped = alerts();
  before(async () => {
    metrics = await registeredMetrics();
  });

  it("has a kind for every runbook", () => {
    assert.deepEqual(readdirSync(RUNBOOKS).sort(), Object.keys(STATUS_WORDS).sort());
  });

  for (const file of Object.keys(STATUS_WORDS))
    it(`${file}: every alert, metric, condition and reason it names exists`, () => {
      const md = readFileSync(join(RUNBOOKS, file), "utf8");
      assert.deepEqual(problems(file, md, { alerts: shipped, metrics, words: STATUS_WORDS[file]! }), []);
    });

  it("would catch a wrong alert, metric, label or reason (the check can fail)", () => {
    const md = [
      "**Seen as:** `OpenBaoBackupsFailling`, `BackingUp=False` with `BackupFaild`.",
      "",
      "Look at `openbao_backup_sizes` and `gitlabcore_hooks_total{colour}`.",
    ].join("\n");
    assert.deepEqual(
      problems("openbao.md", md, { alerts: shipped, metrics, words: STATUS_WORDS["openbao.md"]! }),
      [
        "openbao.md: OpenBaoBackupsFailling is neither a shipped alert nor a condition or reason",
        "openbao.md: metric openbao_backup_sizes is not registered",
        "openbao.md: metric gitlabcore_hooks_total has no label colour",
        'openbao.md: "Seen as" names OpenBaoBackupsFailling, which is no alert, condition, reason or phase of its kind',
        'openbao.md: "Seen as" names BackupFaild, which is no alert, condition, reason or phase of its kind',
      ],
    );
  });
});
