/** The one config.hcl renderer, shared by the workload StatefulSets and blue-green. */
export { type ConfigEnvVar, configEnv } from "./env.js";
export { ConfigError } from "./errors.js";
export { type ConfigPaths, DEFAULT_PATHS, DEFAULT_STATIC_KEY_ID, type RenderOptions } from "./options.js";
export { acmeCARootPem, configHash, peerHosts, renderConfig, tlsSource } from "./render.js";
export { inlineSealSecrets } from "./seal.js";
export { renderSelfInitRequests, SELF_INIT_BLOCK } from "./selfinit.js";
