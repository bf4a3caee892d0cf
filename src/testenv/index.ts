// The test environment's public surface, for test files and benchmarks.
export { type Binaries, ensureBinaries } from "./binaries.js";
export { BAO_DEFAULT_VERSION, BAO_VERSIONS, cacheRoot, KUBERNETES_VERSION } from "./cache.js";
export { type ControlPlane, startControlPlane } from "./controlplane.js";
export {
  ensureNamespace,
  ensureServiceAccount,
  KubeHttp,
  requestServiceAccountToken,
} from "./kubehttp.js";
export * from "./openbao.js";
export { liveChildren } from "./processes.js";
export { type SharedEnv, sharedEnv, uniqueName } from "./shared.js";
