/**
 * The parts of an OpenBaoCluster spec the renderer reads, typed loosely on purpose: it covers the
 * upstream project's field names (some of which this project's schema gains over time) without
 * binding the renderer to one revision of the schema. The CRD validates shapes before objects get
 * here; the renderer still checks what it relies on and reports the field when it is wrong.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";

export type Scalar = string | number | boolean;
export type FreeForm = { [key: string]: unknown };

export interface AuditDeviceView {
  type: string;
  path: string;
  description?: string;
  fileOptions?: { filePath?: string; mode?: string };
  httpOptions?: { uri?: string; headers?: FreeForm };
  syslogOptions?: { facility?: string; tag?: string };
  socketOptions?: { address?: string; socketType?: string; writeTimeout?: string };
  options?: FreeForm;
}

export interface SelfInitRequestView {
  name: string;
  operation: string;
  path: string;
  data?: FreeForm;
  auditDevice?: AuditDeviceView;
  authMethod?: { type?: string; description?: string; config?: FreeForm };
  secretEngine?: { type?: string; description?: string; options?: FreeForm };
  policy?: { policy?: string };
  allowFailure?: boolean;
  headers?: unknown;
  when?: unknown;
}

export interface PluginView {
  type: string;
  name: string;
  image?: string;
  version?: string;
  binaryName?: string;
  sha256sum?: string;
  command?: string;
  args?: string[];
  env?: string[];
}

export interface SpecView {
  version?: string;
  replicas?: number;
  tls?: {
    enabled?: boolean;
    mode?: string;
    acme?: {
      directoryURL?: string;
      email?: string;
      domain?: string;
      domains?: string[];
      caCertSecretRef?: { name?: string };
    };
  };
  configuration?: {
    logLevel?: string;
    logging?: {
      format?: string;
      file?: string;
      pidFile?: string;
      rotateBytes?: number;
      rotateDuration?: string;
      rotateMaxFiles?: number;
    };
    ui?: boolean;
    defaultLeaseTTL?: string;
    maxLeaseTTL?: string;
    cacheSize?: number;
    disableCache?: boolean;
    acmeCARoot?: string;
    allowAuditLogPrefixing?: boolean;
    detectDeadlocks?: boolean;
    enableResponseHeaderHostname?: boolean;
    enableResponseHeaderRaftNodeID?: boolean;
    impreciseLeaseRoleTracking?: boolean;
    introspectionEndpoint?: boolean;
    rawStorageEndpoint?: boolean;
    unsafeAllowAPIAuditCreation?: boolean;
    listener?: {
      proxyProtocolBehavior?: string;
      proxyProtocolAuthorizedAddrs?: string[];
      tlsDisable?: boolean;
      tlsMinVersion?: string;
      tlsMaxVersion?: string;
      tlsKeyExchangePreferences?: string[];
    };
    plugin?: {
      autoDownload?: boolean;
      autoRegister?: boolean;
      downloadBehavior?: string;
      filePermissions?: string;
      fileUID?: number;
    };
    raft?: { performanceMultiplier?: number };
  };
  selfInit?: { enabled?: boolean; requests?: SelfInitRequestView[] };
  unseal?: { type?: string; static?: { currentKey?: string; currentKeyID?: string } } & FreeForm;
  audit?: AuditDeviceView[];
  telemetry?: FreeForm;
  plugins?: PluginView[];
}

export function specView(cluster: OpenBaoCluster): SpecView {
  return (cluster.spec ?? {}) as unknown as SpecView;
}
