// Reads node's TAP output line by line and keeps the tests that failed themselves (not the suites
// that failed only because a test inside them did), so the runner can repeat them just above its
// closing counts: CI shows the end of a long log, and a failure 20,000 lines up is otherwise lost.

export interface Failure {
  /** The test's name, with the names of the suites around it. */
  name: string;
  /** `file:line:column` as the runner gave it, when it did. */
  location?: string;
  /** The first lines of the error. */
  error: string[];
}

/** How many lines of one error are kept: enough for the message and the assertion's values. */
const ERROR_LINES = 12;

export class FailureDigest {
  readonly failures: Failure[] = [];
  /** Names of the suites open at each depth (`# Subtest:` lines), so a failure names its path. */
  private readonly open: string[] = [];
  private current?: { failure: Failure; indent: number; subtestsOnly: boolean; inError: number };

  feed(line: string): void {
    const subtest = /^(\s*)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      this.close();
      const depth = subtest[1]!.length / 4;
      this.open.length = depth;
      this.open[depth] = subtest[2]!;
      return;
    }
    const notOk = /^(\s*)not ok \d+ - (.*?)(?: # .*)?$/.exec(line);
    if (notOk) {
      this.close();
      const depth = notOk[1]!.length / 4;
      const path = [...this.open.slice(0, depth), notOk[2]!];
      this.current = {
        failure: { name: path.join(" › "), error: [] },
        indent: notOk[1]!.length + 2,
        subtestsOnly: false,
        inError: -1,
      };
      return;
    }
    if (/^\s*ok \d+ - /.test(line)) {
      this.close();
      return;
    }
    this.readDetail(line);
  }

  /** The failure being read ends; it is kept unless it only reports failed subtests. */
  close(): void {
    const current = this.current;
    this.current = undefined;
    if (current && !current.subtestsOnly) this.failures.push(current.failure);
  }

  private readDetail(line: string): void {
    const current = this.current;
    if (!current) return;
    const indent = line.length - line.trimStart().length;
    const text = line.trimStart();
    if (current.inError >= 0) {
      // A block scalar's lines are indented deeper than its key; the next key ends it.
      if (indent > current.inError || text === "") {
        if (current.failure.error.length < ERROR_LINES) current.failure.error.push(text);
        return;
      }
      current.inError = -1;
    }
    if (indent !== current.indent) return;
    const key = /^(\w+): ?(.*)$/.exec(text);
    if (!key) return;
    const [, name, value] = key as unknown as [string, string, string];
    if (name === "location") current.failure.location = value.replace(/^'|'$/g, "");
    else if (name === "failureType" && value.includes("subtestsFailed")) current.subtestsOnly = true;
    else if (name === "error") {
      if (/^[|>]/.test(value)) current.inError = indent;
      else current.failure.error.push(value.replace(/^'|'$/g, ""));
    }
  }
}

/** The lines printed above the counts: each failure's path, place and first error lines. */
export function describeFailures(failures: readonly Failure[], limit = 20): string[] {
  if (failures.length === 0) return [];
  const lines = [`${failures.length} failed test${failures.length === 1 ? "" : "s"}:`];
  for (const failure of failures.slice(0, limit)) {
    lines.push(`  ✖ ${failure.name}`);
    if (failure.location) lines.push(`      at ${failure.location}`);
    const error = [...failure.error];
    while (error.length > 0 && error.at(-1) === "") error.pop();
    for (const text of error) lines.push(`      ${text}`);
  }
  if (failures.length > limit)
    lines.push(`  … and ${failures.length - limit} more (search the log for "not ok")`);
  return lines;
}
