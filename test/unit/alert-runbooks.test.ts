import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

// Every alert the chart ships links the runbook section that says what to check and what to run; a
// renamed heading or a new alert without a section fails here, not in someone's incident.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const RULES = join(ROOT, "deploy/chart/platform-operator/rules");

type Alert = { alert: string; annotations?: Record<string, string> };

/** GitHub's heading anchor: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) inFence = !inFence;
    const m = inFence ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (m) anchors.add(headingAnchor(m[1] ?? ""));
  }
  return anchors;
}

function alertsOf(file: string): Alert[] {
  const doc = parse(readFileSync(join(RULES, file), "utf8")) as { spec: { groups: { rules: Alert[] }[] } };
  return doc.spec.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
}

describe("alert runbooks", () => {
  const files = readdirSync(RULES).filter((f) => f.endsWith(".yaml"));

  it("reads every target's rules", () => {
    assert.deepEqual(files.sort(), ["gitlab.yaml", "openbao.yaml", "vault.yaml"]);
  });

  for (const file of files) {
    it(`links each alert of ${file} to an existing runbook section`, () => {
      const alerts = alertsOf(file);
      assert.ok(alerts.length > 0);
      for (const a of alerts) {
        const url = a.annotations?.["runbook_url"];
        assert.ok(url, `${file}: ${a.alert} has no runbook_url`);
        const m = /^docs\/runbooks\/([a-z-]+\.md)#([a-z0-9_-]+)$/.exec(url);
        assert.ok(m, `${file}: ${a.alert}'s runbook_url ${url} is not docs/runbooks/<file>.md#<section>`);
        const doc = join(ROOT, "docs/runbooks", m[1] ?? "");
        assert.ok(existsSync(doc), `${file}: ${a.alert} links ${m[1]}, which does not exist`);
        assert.ok(
          anchorsOf(readFileSync(doc, "utf8")).has(m[2] ?? ""),
          `${file}: ${a.alert} links #${m[2]}, which is no heading of ${m[1]}`,
        );
      }
    });
  }

  it("makes anchors the way GitHub does", () => {
    assert.equal(headingAnchor("Failed blue-green upgrade"), "failed-blue-green-upgrade");
    assert.equal(headingAnchor("Runbook: the operator itself"), "runbook-the-operator-itself");
    assert.equal(headingAnchor("CRD revision mismatch"), "crd-revision-mismatch");
  });

  it("keeps every runbook's internal links pointing at its own headings", () => {
    for (const file of readdirSync(join(ROOT, "docs/runbooks"))) {
      const text = readFileSync(join(ROOT, "docs/runbooks", file), "utf8");
      const anchors = anchorsOf(text);
      for (const m of text.matchAll(/\]\(#([^)]+)\)/g))
        assert.ok(anchors.has(m[1] ?? ""), `${file} links #${m[1]}, which is none of its headings`);
      for (const m of text.matchAll(/\]\(([a-z-]+\.md)(?:#([^)]+))?\)/g)) {
        const target = join(ROOT, "docs/runbooks", m[1] ?? "");
        assert.ok(existsSync(target), `${file} links ${m[1]}, which does not exist`);
        if (m[2])
          assert.ok(anchorsOf(readFileSync(target, "utf8")).has(m[2]), `${file} links ${m[1]}#${m[2]}`);
      }
    }
  });
});
