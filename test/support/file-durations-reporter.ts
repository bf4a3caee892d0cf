// A second reporter for Node's test runner (see test/run.ts): how long each test file's top-level
// tests and suites took, summed per file, printed once as JSON {"<file path>": seconds}. The runner
// keeps these between runs to start the slowest files first.

interface TestEvent {
  type: string;
  data?: { nesting?: number; file?: string; details?: { duration_ms?: number } };
}

export default async function* fileDurations(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const seconds: Record<string, number> = {};
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { nesting, file, details } = event.data ?? {};
    if (nesting !== 0 || !file || details?.duration_ms === undefined) continue;
    seconds[file] = (seconds[file] ?? 0) + details.duration_ms / 1000;
  }
  yield `${JSON.stringify(seconds)}\n`;
}
