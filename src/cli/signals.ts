/** Resolves on the first SIGINT/SIGTERM; a second one exits at once. */
export function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    const onSignal = (sig: string) => {
      process.once("SIGINT", () => process.exit(130));
      process.once("SIGTERM", () => process.exit(143));
      resolve(sig);
    };
    process.once("SIGINT", () => onSignal("SIGINT"));
    process.once("SIGTERM", () => onSignal("SIGTERM"));
  });
}
