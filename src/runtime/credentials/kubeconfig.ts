import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse } from "yaml";
import { ClientNodeCredentials } from "./client-node.js";
import { FileCredentials, type Source } from "./file-credentials.js";
import type { KubeconfigEntry as Entry, Kubeconfig } from "./kubeconfig-model.js";
import type { Credentials } from "./types.js";
import { WatchedFile } from "./watched-file.js";

type Fields = Record<string, unknown>;

export interface KubeconfigOptions {
  /** Use this context instead of current-context. */
  context?: string;
  /** How often, at most, file-backed tokens and certificates are checked for rotation (default 1 s). */
  checkEveryMs?: number;
}

/** One kubeconfig document already parsed (e.g. built in memory); `origin` names it in errors. */
export function kubeconfigFromDocument(doc: unknown, origin: string): Kubeconfig {
  const config: Kubeconfig = { files: [], clusters: new Map(), users: new Map(), contexts: new Map() };
  mergeDocument(config, doc, origin);
  return config;
}

/** Reads and merges kubeconfig files; a missing first file is an error, like kubectl --kubeconfig. */
export function readKubeconfigFiles(paths: string[]): Kubeconfig {
  const config: Kubeconfig = { files: [], clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (e) {
      throw new Error(`kubeconfig ${path}: cannot read it: ${(e as NodeJS.ErrnoException).code ?? e}`);
    }
    let doc: unknown;
    try {
      doc = parse(text);
    } catch (e) {
      throw new Error(`kubeconfig ${path}: not valid YAML: ${(e as Error).message.split("\n")[0]}`);
    }
    mergeDocument(config, doc ?? {}, resolve(path));
  }
  return config;
}

/** Adds one parsed kubeconfig document; `file` names it in errors and anchors relative paths. */
export function mergeDocument(config: Kubeconfig, doc: unknown, file: string): void {
  if (!isMapping(doc)) throw new Error(`kubeconfig ${file}: the top level must be a mapping`);
  config.files.push(file);
  const lists = [
    ["clusters", "cluster", config.clusters],
    ["users", "user", config.users],
    ["contexts", "context", config.contexts],
  ] as const;
  for (const [list, inner, into] of lists) {
    const items = doc[list];
    if (items === undefined || items === null) continue;
    if (!Array.isArray(items)) throw new Error(`kubeconfig ${file}: ${list} must be a list`);
    items.forEach((item: unknown, i) => {
      const where = `kubeconfig ${file}: ${list}[${i}]`;
      if (!isMapping(item)) throw new Error(`${where} must be a mapping`);
      const name = item["name"];
      if (typeof name !== "string" || name === "")
        throw new Error(`${where}.name must be a non-empty string`);
      const fields = item[inner] ?? {};
      if (!isMapping(fields)) throw new Error(`${where}.${inner} must be a mapping`);
      if (!into.has(name)) into.set(name, { kind: inner, name, fields, file });
    });
  }
  const current = doc["current-context"];
  if (current !== undefined && current !== null && typeof current !== "string")
    throw new Error(`kubeconfig ${file}: current-context must be a string`);
  if (!config.currentContext && current) config.currentContext = current;
}

/**
 * Credentials for the current (or named) context. Exec plugins and auth providers run through
 * @kubernetes/client-node, loaded only then; everything else is read here, so a process using
 * certificates or tokens never loads that library and its generated API (about 65 MiB).
 */
export function credentialsFromKubeconfig(config: Kubeconfig, opts: KubeconfigOptions = {}): Credentials {
  const origin = config.files.length === 1 ? config.files[0] : config.files.join(":");
  const contextName = opts.context ?? config.currentContext;
  if (!contextName)
    throw new Error(`kubeconfig ${origin}: current-context is not set and no context was chosen`);
  const context = config.contexts.get(contextName);
  if (!context) throw new Error(`kubeconfig ${origin}: context "${contextName}" is not defined`);
  const clusterName = optionalString(context, "cluster");
  if (!clusterName) throw new Error(`${at(context)}.cluster is not set`);
  const cluster = config.clusters.get(clusterName);
  if (!cluster) throw new Error(`${at(context)}.cluster: cluster "${clusterName}" is not defined`);
  const userName = optionalString(context, "user");
  const user = userName ? config.users.get(userName) : undefined;
  if (userName && !user) throw new Error(`${at(context)}.user: user "${userName}" is not defined`);

  const server = serverOf(cluster);
  const source = `kubeconfig ${origin}, context ${contextName}`;
  const u = user?.fields ?? {};
  for (const unsupported of ["as", "as-uid", "as-groups", "as-user-extra"])
    if (u[unsupported] !== undefined)
      throw new Error(`${at(user!)}.${unsupported}: impersonation is not supported`);
  if (u["username"] !== undefined || u["password"] !== undefined)
    throw new Error(
      `${at(user!)}: username/password (basic auth) is not supported; API servers dropped it in 1.19`,
    );
  if (cluster.fields["proxy-url"] !== undefined)
    throw new Error(`${at(cluster)}.proxy-url: proxies are not supported`);

  const tls = clusterTls(cluster, opts.checkEveryMs);
  if (u["exec"] !== undefined || u["auth-provider"] !== undefined) {
    return new ClientNodeCredentials({ config, contextName, server, source });
  }
  const cert = sourceOf(user, "client-certificate", "client certificate", opts.checkEveryMs);
  const key = sourceOf(user, "client-key", "client key", opts.checkEveryMs);
  if (cert && !key) throw new Error(`${at(user!)}: client-certificate is set without client-key`);
  if (key && !cert) throw new Error(`${at(user!)}: client-key is set without client-certificate`);
  return new FileCredentials({
    server,
    source,
    ...tls,
    cert,
    key,
    token: tokenOf(user, opts.checkEveryMs),
  });
}

function serverOf(cluster: Entry): string {
  const server = optionalString(cluster, "server");
  const where = `${at(cluster)}.server`;
  if (!server) throw new Error(`${where} is not set`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new Error(`${where}: "${server}" is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new Error(`${where}: "${server}" must start with https:// or http://`);
  return server;
}

function clusterTls(cluster: Entry, checkEveryMs: number | undefined) {
  const ca = sourceOf(cluster, "certificate-authority", "certificate authority", checkEveryMs);
  const insecure = cluster.fields["insecure-skip-tls-verify"];
  if (insecure !== undefined && typeof insecure !== "boolean")
    throw new Error(`${at(cluster)}.insecure-skip-tls-verify must be true or false`);
  // client-go refuses the pair: a CA that is never checked is a misconfiguration, not a choice.
  if (insecure && ca)
    throw new Error(
      `${at(cluster)}: insecure-skip-tls-verify cannot be combined with a certificate authority`,
    );
  return {
    ca,
    insecureSkipTlsVerify: insecure === true,
    tlsServerName: optionalString(cluster, "tls-server-name"),
  };
}

/**
 * `<field>-data` (base64 PEM, inline) wins over `<field>` (a file, relative to its kubeconfig), as in
 * client-go. Files are watched so rotated certificates are picked up.
 */
function sourceOf(
  entry: Entry | undefined,
  field: string,
  what: string,
  checkEveryMs: number | undefined,
): Source | undefined {
  if (!entry) return undefined;
  const data = optionalString(entry, `${field}-data`);
  if (data) {
    const inline = Buffer.from(data, "base64");
    // Never quote the value: a key is a secret.
    if (!/^[A-Za-z0-9+/=\s]+$/.test(data) || !inline.toString("latin1").includes("-----BEGIN "))
      throw new Error(`${at(entry)}.${field}-data is not base64-encoded PEM`);
    return { inline };
  }
  const file = optionalString(entry, field);
  if (!file) return undefined;
  try {
    return { file: new WatchedFile(relativeTo(entry, file), what, checkEveryMs) };
  } catch (e) {
    throw new Error(`${at(entry)}.${field}: ${(e as Error).message}`);
  }
}

/** tokenFile wins over token (client-go: the file is re-read and its last good value is used). */
function tokenOf(user: Entry | undefined, checkEveryMs: number | undefined): Source | undefined {
  if (!user) return undefined;
  const file = optionalString(user, "tokenFile");
  if (file) {
    try {
      return { file: new WatchedFile(relativeTo(user, file), "token file", checkEveryMs) };
    } catch (e) {
      throw new Error(`${at(user)}.tokenFile: ${(e as Error).message}`);
    }
  }
  const token = optionalString(user, "token");
  return token ? { inline: Buffer.from(token, "utf8") } : undefined;
}

function relativeTo(entry: Entry, file: string): string {
  return isAbsolute(file) ? file : resolve(dirname(entry.file), file);
}

function optionalString(entry: Entry, field: string): string | undefined {
  const v = entry.fields[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new Error(`${at(entry)}.${field} must be a string`);
  return v;
}

function at(entry: Entry): string {
  return `kubeconfig ${entry.file}: ${entry.kind} "${entry.name}"`;
}

function isMapping(v: unknown): v is Fields {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
