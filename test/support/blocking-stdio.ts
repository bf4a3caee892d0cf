// Loaded (--import) into the test runner and every test file's process. Node's test runner, with
// --test-force-exit, calls process.exit() as soon as the tests are done, and a child's results
// still buffered in its stdout pipe (asynchronous on Linux) are lost: whole tails of files vanished
// from the report, and the run ended without its summary (nodejs/node#64833). Blocking writes leave
// nothing buffered at exit.
type WithHandle = { _handle?: { setBlocking?: (blocking: boolean) => void } };
for (const stream of [process.stdout, process.stderr])
  (stream as unknown as WithHandle)._handle?.setBlocking?.(true);
