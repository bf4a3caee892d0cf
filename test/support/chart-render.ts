import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { runCommand } from "../../src/testenv/exec.js";
import { ensureHelm } from "../../src/testenv/helm.js";

// The operator's chart rendered by the real helm, parsed strictly: a document with a key twice in
// one map is an error here, as it is for kustomize (and so for Flux's post-renderer).

export const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator", import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are arbitrary objects
export type Obj = Record<string, any>;

/** `helm template po <chart> --namespace ops <args>`: the raw text. */
export async function renderText(args: string[]): Promise<string> {
  const helm = await ensureHelm();
  return (await runCommand(helm, ["template", "po", CHART, "--namespace", "ops", ...args])).stdout;
}

/** Every non-empty document of a YAML stream; a parse error (a duplicate key among them) fails. */
export function parseStrict(text: string, what = "the rendered chart"): Obj[] {
  const out: Obj[] = [];
  for (const doc of parseAllDocuments(text, { uniqueKeys: true })) {
    const errors = [...doc.errors, ...doc.warnings];
    assert.deepEqual(
      errors.map((e) => e.message),
      [],
      `${what}: document ${out.length + 1} does not parse cleanly`,
    );
    const obj = doc.toJS() as Obj | null;
    if (obj !== null) out.push(obj);
  }
  return out;
}

export async function render(args: string[]): Promise<Obj[]> {
  return parseStrict(await renderText(args), `helm template ${args.join(" ")}`);
}

/** The error helm gives for these values; fails when they render. */
export async function renderFails(args: string[]): Promise<string> {
  try {
    await renderText(args);
  } catch (e) {
    return (e as Error).message;
  }
  assert.fail(`rendering with ${args.join(" ")} succeeded`);
}

export const ofKind = (objs: Obj[], kind: string): Obj[] => objs.filter((o) => o.kind === kind);

export function named(objs: Obj[], kind: string, name: string): Obj {
  const found = objs.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `${kind} ${name} is rendered`);
  return found;
}

/** The operator configuration file a process's ConfigMap carries. */
export function processConfig(objs: Obj[], name: string): Obj {
  const cm = named(objs, "ConfigMap", name);
  return parseStrict(cm.data["config.yaml"], `${name}'s config.yaml`)[0]!;
}
