/**
 * The contract between the controllers that build an executor Job and the executor running inside it.
 *
 * One value, `ExecutorJob`, says everything the executor needs. The Job builder turns it into
 * container env, volumes and mounts with `toEnvAndMounts`; the executor reads it back with `fromEnv`.
 * Both sides use this file only, so the two cannot drift: a field added here is carried by both.
 * That is why it stays one file past 400 lines: the encoder and the decoder of each field sit side
 * by side. The result line the executor writes back is in result.ts.
 *
 * Env holds only names, addresses and numbers. Every secret (OpenBao token, object store keys, the
 * ServiceAccount token) reaches the pod as a file from a volume, never as an env value in the Job spec.
 */
import type { BackupProvider } from "../../../apis/openbaocluster.js";
import { isoSeconds } from "../../../runtime/utc-time.js";

export const ExecutorOperations = ["backup", "restore"] as const;
export type ExecutorOperation = (typeof ExecutorOperations)[number];

/** Log in with the pod's projected ServiceAccount token against OpenBao's JWT auth method. */
export interface JwtAuth {
  method: "jwt";
  /** OpenBao JWT role (spec.backup.jwtAuthRole or the restore's jwtAuthRole). */
  role: string;
  /** Audience the projected token carries; OpenBao's role must bind it. */
  audience: string;
  /**
   * Mount path of the JWT auth method in OpenBao. Unset: upstream's `jwt-operator` (where its
   * selfInit.oidc bootstrap and its docs put it), then this operator's earlier `jwt` (jwtMounts).
   */
  mountPath?: string;
  /** Lifetime asked of the kubelet for the projected token; default 600 (its minimum). */
  expirationSeconds?: number;
}

/** Use a token from a Secret (spec.backup.tokenSecretRef), mounted as a file. */
export interface TokenAuth {
  method: "token";
  secretName: string;
  /** Key of the token in the Secret; default "token". */
  secretKey?: string;
}

export type ExecutorAuth = JwtAuth | TokenAuth;

export interface ExecutorStore {
  provider: BackupProvider;
  /** Bucket, or the Azure container. */
  bucket: string;
  /** Full object key, computed by the controller (see objectKey). */
  key: string;
  endpoint?: string;
  region?: string;
  usePathStyle?: boolean;
  insecureSkipVerify?: boolean;
  /** Bytes per part / block / chunk of a multipart transfer. */
  partSize?: number;
  /** Parts in flight at once. */
  concurrency?: number;
  /**
   * S3: the role assumed through web identity (AssumeRoleWithWebIdentity) with the pod's projected
   * ServiceAccount token, as AWS's IRSA does; an S3-compatible store's STS is its own endpoint.
   */
  roleArn?: string;
  azureStorageAccount?: string;
  gcsProject?: string;
  /**
   * Secret (spec.backup.target.credentialsSecretRef) mounted whole as a folder. The executor looks
   * for the files named in CredentialFiles (objectstore/credentials.ts); missing files mean "no static credentials".
   */
  credentialsSecretName?: string;
}

export interface ExecutorJob {
  operation: ExecutorOperation;
  openbao: {
    /** https URL of the cluster's active (or client) Service, e.g. https://bao-active.ns.svc:8200. */
    address: string;
    /** Secret with the cluster's CA (ca.crt), mounted so the executor verifies OpenBao's certificate. */
    caSecretName?: string;
    /** Key of the CA in that Secret; default "ca.crt". */
    caSecretKey?: string;
  };
  auth: ExecutorAuth;
  store: ExecutorStore;
  /** Restore only: use snapshot-force, only with the restore's spec.force: true (else the seal-checked snapshot path). */
  force?: boolean;
}

/** Where the executor finds its files inside the pod. */
export const ExecutorPaths = {
  caDir: "/var/run/openbao-executor/ca",
  tokenDir: "/var/run/openbao-executor/token",
  jwtDir: "/var/run/openbao-executor/jwt",
  credentialsDir: "/var/run/openbao-executor/credentials",
  /** The projected token a web identity presents to STS (target.roleArn). */
  webIdentityDir: "/var/run/openbao-executor/web-identity",
  /** Kubernetes' default terminationMessagePath: the controller reads the result from the pod status. */
  terminationLog: "/dev/termination-log",
} as const;
const CA_FILE = "ca.crt";
const TOKEN_FILE = "token";
const JWT_FILE = "token";
const WEB_IDENTITY_FILE = "token";
/** Audience of the web identity token: AWS STS's, which S3-compatible STS servers are set up to accept too. */
export const WEB_IDENTITY_AUDIENCE = "sts.amazonaws.com";
/** Lifetime of that token; the kubelet renews it, and the executor reads the file at each exchange. */
const WEB_IDENTITY_EXPIRATION_SECONDS = 3600;

/** The files the executor reads, for a parsed ExecutorJob (absent entries are not mounted). */
export function executorFiles(job: ExecutorJob): {
  caFile?: string;
  tokenFile?: string;
  jwtFile?: string;
  credentialsDir?: string;
  webIdentityTokenFile?: string;
} {
  return {
    caFile: job.openbao.caSecretName ? `${ExecutorPaths.caDir}/${CA_FILE}` : undefined,
    tokenFile: job.auth.method === "token" ? `${ExecutorPaths.tokenDir}/${TOKEN_FILE}` : undefined,
    jwtFile: job.auth.method === "jwt" ? `${ExecutorPaths.jwtDir}/${JWT_FILE}` : undefined,
    credentialsDir: job.store.credentialsSecretName ? ExecutorPaths.credentialsDir : undefined,
    webIdentityTokenFile: job.store.roleArn
      ? `${ExecutorPaths.webIdentityDir}/${WEB_IDENTITY_FILE}`
      : undefined,
  };
}

/** Env names. Only these are read by fromEnv; everything else in the container env is ignored. */
export const ExecutorEnv = {
  operation: "OPENBAO_EXECUTOR_OPERATION",
  address: "OPENBAO_EXECUTOR_ADDRESS",
  caSecretName: "OPENBAO_EXECUTOR_CA_SECRET",
  caSecretKey: "OPENBAO_EXECUTOR_CA_SECRET_KEY",
  authMethod: "OPENBAO_EXECUTOR_AUTH_METHOD",
  jwtRole: "OPENBAO_EXECUTOR_JWT_ROLE",
  jwtAudience: "OPENBAO_EXECUTOR_JWT_AUDIENCE",
  jwtMountPath: "OPENBAO_EXECUTOR_JWT_MOUNT_PATH",
  jwtExpirationSeconds: "OPENBAO_EXECUTOR_JWT_EXPIRATION_SECONDS",
  tokenSecretName: "OPENBAO_EXECUTOR_TOKEN_SECRET",
  tokenSecretKey: "OPENBAO_EXECUTOR_TOKEN_SECRET_KEY",
  provider: "OPENBAO_EXECUTOR_STORE_PROVIDER",
  bucket: "OPENBAO_EXECUTOR_STORE_BUCKET",
  key: "OPENBAO_EXECUTOR_STORE_KEY",
  endpoint: "OPENBAO_EXECUTOR_STORE_ENDPOINT",
  region: "OPENBAO_EXECUTOR_STORE_REGION",
  usePathStyle: "OPENBAO_EXECUTOR_STORE_USE_PATH_STYLE",
  insecureSkipVerify: "OPENBAO_EXECUTOR_STORE_INSECURE_SKIP_VERIFY",
  partSize: "OPENBAO_EXECUTOR_STORE_PART_SIZE",
  concurrency: "OPENBAO_EXECUTOR_STORE_CONCURRENCY",
  roleArn: "OPENBAO_EXECUTOR_STORE_ROLE_ARN",
  azureStorageAccount: "OPENBAO_EXECUTOR_STORE_AZURE_ACCOUNT",
  gcsProject: "OPENBAO_EXECUTOR_STORE_GCS_PROJECT",
  credentialsSecretName: "OPENBAO_EXECUTOR_STORE_CREDENTIALS_SECRET",
  force: "OPENBAO_EXECUTOR_FORCE",
} as const;

/** Upstream's JWT auth mount for the operator and its Jobs (selfInit.oidc bootstraps it there). */
export const DEFAULT_JWT_MOUNT_PATH = "jwt-operator";
/** Where this operator logged in before it followed upstream; still tried, so such setups keep working. */
export const LEGACY_JWT_MOUNT_PATH = "jwt";

/** The mounts a JWT login tries, in order: the one set, else upstream's and then the earlier one. */
export function jwtMounts(mountPath: string | undefined): string[] {
  const set = mountPath?.replace(/^\/+|\/+$/g, "");
  return set ? [set] : [DEFAULT_JWT_MOUNT_PATH, LEGACY_JWT_MOUNT_PATH];
}
export const DEFAULT_JWT_EXPIRATION_SECONDS = 600;
export const DEFAULT_TOKEN_SECRET_KEY = "token";
export const DEFAULT_CA_SECRET_KEY = "ca.crt";
export const DEFAULT_PART_SIZE = 10 * 1024 * 1024;
export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const DEFAULT_CONCURRENCY = 3;

type Obj = Record<string, unknown>;
export interface EnvVar {
  name: string;
  value: string;
}
export interface EnvAndMounts {
  env: EnvVar[];
  /** Pod volumes; names are prefixed "executor-" so they do not collide with the builder's own. */
  volumes: Obj[];
  /** Mounts for the executor container, all read-only. */
  volumeMounts: Obj[];
}

/**
 * The container env and the volumes for a Job. Pure. Defaults are written out explicitly, so the
 * Job spec shows what the executor will do and fromEnv(toEnvAndMounts(j).env) equals withDefaults(j).
 */
export function toEnvAndMounts(job: ExecutorJob): EnvAndMounts {
  const j = withDefaults(job);
  const env: EnvVar[] = [];
  const put = (name: string, value: string | number | boolean | undefined): void => {
    if (value !== undefined) env.push({ name, value: String(value) });
  };
  const E = ExecutorEnv;
  put(E.operation, j.operation);
  put(E.address, j.openbao.address);
  put(E.caSecretName, j.openbao.caSecretName);
  put(E.caSecretKey, j.openbao.caSecretName ? j.openbao.caSecretKey : undefined);
  put(E.authMethod, j.auth.method);
  if (j.auth.method === "jwt") {
    put(E.jwtRole, j.auth.role);
    put(E.jwtAudience, j.auth.audience);
    put(E.jwtMountPath, j.auth.mountPath);
    put(E.jwtExpirationSeconds, j.auth.expirationSeconds);
  } else {
    put(E.tokenSecretName, j.auth.secretName);
    put(E.tokenSecretKey, j.auth.secretKey);
  }
  const s = j.store;
  put(E.provider, s.provider);
  put(E.bucket, s.bucket);
  put(E.key, s.key);
  put(E.endpoint, s.endpoint);
  put(E.region, s.region);
  put(E.usePathStyle, s.usePathStyle);
  put(E.insecureSkipVerify, s.insecureSkipVerify);
  put(E.partSize, s.partSize);
  put(E.concurrency, s.concurrency);
  put(E.roleArn, s.roleArn);
  put(E.azureStorageAccount, s.azureStorageAccount);
  put(E.gcsProject, s.gcsProject);
  put(E.credentialsSecretName, s.credentialsSecretName);
  put(E.force, j.operation === "restore" ? j.force : undefined);
  // The names every AWS SDK reads for a web identity, so any tool in the image agrees with ours.
  if (s.roleArn) {
    put("AWS_ROLE_ARN", s.roleArn);
    put("AWS_WEB_IDENTITY_TOKEN_FILE", `${ExecutorPaths.webIdentityDir}/${WEB_IDENTITY_FILE}`);
  }

  const volumes: Obj[] = [];
  const volumeMounts: Obj[] = [];
  const mount = (name: string, mountPath: string, source: Obj): void => {
    volumes.push({ name, ...source });
    volumeMounts.push({ name, mountPath, readOnly: true });
  };
  if (j.openbao.caSecretName) {
    mount("executor-openbao-ca", ExecutorPaths.caDir, {
      secret: {
        secretName: j.openbao.caSecretName,
        items: [{ key: j.openbao.caSecretKey, path: CA_FILE }],
        defaultMode: 0o444,
      },
    });
  }
  if (j.auth.method === "jwt") {
    mount("executor-jwt", ExecutorPaths.jwtDir, {
      projected: {
        sources: [
          {
            serviceAccountToken: {
              audience: j.auth.audience,
              expirationSeconds: j.auth.expirationSeconds,
              path: JWT_FILE,
            },
          },
        ],
        defaultMode: 0o440,
      },
    });
  } else {
    mount("executor-openbao-token", ExecutorPaths.tokenDir, {
      secret: {
        secretName: j.auth.secretName,
        items: [{ key: j.auth.secretKey, path: TOKEN_FILE }],
        defaultMode: 0o440,
      },
    });
  }
  if (s.credentialsSecretName) {
    mount("executor-store-credentials", ExecutorPaths.credentialsDir, {
      secret: { secretName: s.credentialsSecretName, defaultMode: 0o440 },
    });
  }
  if (s.roleArn) {
    mount("executor-web-identity", ExecutorPaths.webIdentityDir, {
      projected: {
        sources: [
          {
            serviceAccountToken: {
              audience: WEB_IDENTITY_AUDIENCE,
              expirationSeconds: WEB_IDENTITY_EXPIRATION_SECONDS,
              path: WEB_IDENTITY_FILE,
            },
          },
        ],
        defaultMode: 0o440,
      },
    });
  }
  return { env, volumes, volumeMounts };
}

/** A field of the contract that is missing or malformed; the message names the env var. */
export class ContractError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = "ContractError";
  }
}

type Env = Record<string, string | undefined>;

/** Parses the contract inside the Job. Throws ContractError naming the first bad variable. */
export function fromEnv(env: Env): ExecutorJob {
  const E = ExecutorEnv;
  const text = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v === "" ? undefined : v;
  };
  const required = (name: string): string => {
    const v = text(name);
    if (v === undefined) throw new ContractError(name, "is required");
    return v;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[]): T => {
    const v = required(name);
    if (!(allowed as readonly string[]).includes(v))
      throw new ContractError(name, `must be one of ${allowed.join(", ")}, got "${v}"`);
    return v as T;
  };
  const bool = (name: string): boolean | undefined => {
    const v = text(name);
    if (v === undefined) return undefined;
    if (v !== "true" && v !== "false") throw new ContractError(name, `must be true or false, got "${v}"`);
    return v === "true";
  };
  const int = (name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    const v = text(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max)
      throw new ContractError(name, `must be an integer from ${min} to ${max}, got "${v}"`);
    return n;
  };

  const operation = oneOf(E.operation, ExecutorOperations);
  const address = required(E.address);
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new ContractError(E.address, `is not a URL: "${address}"`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new ContractError(E.address, `must be an http(s) URL, got "${url.protocol}"`);

  const method = oneOf(E.authMethod, ["jwt", "token"] as const);
  const auth: ExecutorAuth =
    method === "jwt"
      ? {
          method,
          role: required(E.jwtRole),
          audience: required(E.jwtAudience),
          mountPath: text(E.jwtMountPath),
          expirationSeconds: int(E.jwtExpirationSeconds, 600),
        }
      : { method, secretName: required(E.tokenSecretName), secretKey: text(E.tokenSecretKey) };

  const provider = oneOf(E.provider, ["s3", "azure", "gcs"] as const);
  const store: ExecutorStore = {
    provider,
    bucket: required(E.bucket),
    key: required(E.key),
    endpoint: text(E.endpoint),
    region: text(E.region),
    usePathStyle: bool(E.usePathStyle),
    insecureSkipVerify: bool(E.insecureSkipVerify),
    partSize: int(E.partSize, MIN_PART_SIZE),
    concurrency: int(E.concurrency, 1, 10),
    roleArn: text(E.roleArn),
    azureStorageAccount: text(E.azureStorageAccount),
    gcsProject: text(E.gcsProject),
    credentialsSecretName: text(E.credentialsSecretName),
  };
  if (store.endpoint !== undefined) {
    try {
      new URL(store.endpoint);
    } catch {
      throw new ContractError(E.endpoint, `is not a URL: "${store.endpoint}"`);
    }
  }
  return withDefaults(
    dropUndefined({
      operation,
      openbao: { address, caSecretName: text(E.caSecretName), caSecretKey: text(E.caSecretKey) },
      auth,
      store,
      force: operation === "restore" ? bool(E.force) : undefined,
    }),
  );
}

/** The job with every default filled in; what the executor actually runs with. */
export function withDefaults(job: ExecutorJob): ExecutorJob {
  const auth: ExecutorAuth =
    job.auth.method === "jwt"
      ? {
          ...job.auth,
          expirationSeconds: job.auth.expirationSeconds ?? DEFAULT_JWT_EXPIRATION_SECONDS,
        }
      : { ...job.auth, secretKey: job.auth.secretKey ?? DEFAULT_TOKEN_SECRET_KEY };
  return dropUndefined({
    ...job,
    openbao: {
      ...job.openbao,
      caSecretKey: job.openbao.caSecretName ? (job.openbao.caSecretKey ?? DEFAULT_CA_SECRET_KEY) : undefined,
    },
    auth,
    store: {
      ...job.store,
      region: job.store.region ?? (job.store.provider === "s3" ? "us-east-1" : undefined),
      usePathStyle: job.store.usePathStyle ?? false,
      insecureSkipVerify: job.store.insecureSkipVerify ?? false,
      partSize: job.store.partSize ?? DEFAULT_PART_SIZE,
      concurrency: job.store.concurrency ?? DEFAULT_CONCURRENCY,
    },
    force: job.operation === "restore" ? (job.force ?? false) : undefined,
  });
}

function dropUndefined<T>(value: T): T {
  if (Array.isArray(value) || value === null || typeof value !== "object") return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value as Obj)) if (v !== undefined) out[k] = dropUndefined(v);
  return out as T;
}

// ---------------------------------------------------------------- object key

/**
 * The object key, upstream's layout: `<pathPrefix>/<namespace>/<cluster>/<timestamp>-<id>.snap`.
 * The timestamp is UTC with seconds, safe in any object store (no colons).
 */
export function objectKey(p: {
  pathPrefix?: string;
  namespace: string;
  cluster: string;
  time: Date;
  id: string;
}): string {
  const stamp = isoSeconds(p.time).replace(/[-:]/g, "");
  const prefix = (p.pathPrefix ?? "").replace(/^\/+|\/+$/g, "");
  return [prefix, p.namespace, p.cluster, `${stamp}-${p.id}.snap`].filter((x) => x !== "").join("/");
}
