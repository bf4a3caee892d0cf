// The OpenBao side of the test environment, one import for test files.

export { type DevOpenBao, type DevOpenBaoOptions, startDevOpenBao } from "./baodev.js";
export { type BaoEndpoint, baoCall, baoHealth, baoRequest } from "./baohttp.js";
export {
  configureKubernetesAuth,
  type KubeApiAccess,
  type KubernetesAuthOptions,
  kubernetesLogin,
  type LoginResult,
} from "./baokubeauth.js";
export { type RaftNode, type RaftOpenBao, startRaftOpenBao } from "./baoraft.js";
