// Loaded (--import) into every test file's process by test/run: when the process exits, one JSON
// line with the CPU it used — its own and that of the children it waited for (kubectl, operators,
// bao, helm) — goes to the run's report file. The runner prints the costliest files, so the next
// cut of the suite's time is aimed at measured CPU, not at wall time that may only be waiting.
// Pods on the node are not children of the file: their CPU shows only in the machine's total.
import { appendFileSync, readFileSync } from "node:fs";

const report = process.env["TESTENV_CPU_REPORT"];
const file = process.argv.find((a) => a.endsWith(".test.js"));
const started = Date.now();

/** utime, stime, cutime, cstime of /proc/self/stat, in seconds (USER_HZ 100). */
function cpuSeconds(): { self: number; children: number } | undefined {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // The command name may hold spaces; the fields after its closing parenthesis do not.
    const f = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    // After the name: state is field 3, so utime (14) is index 11.
    const [utime = 0, stime = 0, cutime = 0, cstime = 0] = f.slice(11, 15);
    return { self: (utime + stime) / 100, children: (cutime + cstime) / 100 };
  } catch {
    return undefined;
  }
}

if (report && file)
  process.on("exit", () => {
    const cpu = cpuSeconds();
    if (!cpu) return;
    try {
      appendFileSync(report, `${JSON.stringify({ file, ...cpu, wall: (Date.now() - started) / 1000 })}\n`);
    } catch {
      // A report that cannot be written costs the numbers, never the run.
    }
  });
