import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

// The chart's README names every value its schema accepts, so a value added to the chart without a
// word for its users fails here.

const CHART = fileURLToPath(new URL("../../../deploy/chart/platform-operator/", import.meta.url));

type Schema = { properties?: Record<string, Schema> };

/** Top-level values, and one level below where the schema spells the object out. */
function valuePaths(schema: Schema, whole: string[]): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([k, v]) =>
    v.properties && !whole.includes(k) ? Object.keys(v.properties).map((p) => `${k}.${p}`) : [k],
  );
}

describe("the chart README", () => {
  it("names every value of values.schema.json", () => {
    const schema = JSON.parse(readFileSync(`${CHART}values.schema.json`, "utf8")) as Schema;
    const readme = readFileSync(`${CHART}README.md`, "utf8");
    // Documented as a group: the targets' sections, the webhook's, resource requests and limits,
    // upstream's provisioner.* (accepted, applied nowhere).
    const paths = valuePaths(schema, ["targets", "webhook", "resources", "provisioner"]);
    assert.ok(paths.length > 30 && paths.includes("image.digest"), paths.join(" "));
    const missing = paths.filter((p) => !readme.includes(`\`${p}`) && !readme.includes(` ${p}\``));
    assert.deepEqual(missing, [], "values the README does not name");
  });
});
