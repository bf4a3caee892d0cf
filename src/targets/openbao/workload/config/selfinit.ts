/**
 * spec.selfInit.requests as OpenBao `initialize` stanzas. They live in a file of their own (the
 * self-init ConfigMap) so the initialization service can empty it once the cluster reports
 * initialized, and a restart cannot replay them.
 */
import type { OpenBaoCluster } from "../../../../apis/openbaocluster.js";
import { auditOptions, type PlacedAuditDevice } from "./audit.js";
import { ConfigError } from "./errors.js";
import { attrs, block, type HclNode, type HclObject, type HclValue, renderNodes } from "./hcl.js";
import { type OidcBootstrapFacts, oidcBootstrapBlock } from "./oidc-bootstrap.js";
import { recoveryKeysBlock } from "./recovery-keys.js";
import { requireRelease } from "./release.js";
import { type AuditDeviceView, type FreeForm, type SelfInitRequestView, specView } from "./spec-view.js";
import { isObject, objectList, record, stringValue, toHcl } from "./values.js";

const AUDIT_PATH = /^\/?sys\/audit\/(.+)$/;

/**
 * Self-init requests that enable an audit device. OpenBao refuses audit devices created through
 * its API (unless configuration.unsafeAllowAPIAuditCreation), so these become declarative `audit`
 * stanzas of the server config instead, which also keep the device after the requests go inert.
 */
export function selfInitAuditDevices(
  cluster: OpenBaoCluster,
): Array<PlacedAuditDevice & { request: string }> {
  const spec = specView(cluster);
  if (!spec.selfInit?.enabled || spec.configuration?.unsafeAllowAPIAuditCreation) return [];
  const out: Array<PlacedAuditDevice & { request: string }> = [];
  objectList<SelfInitRequestView>(spec.selfInit.requests, "selfInit.requests").forEach((r, i) => {
    const match = typeof r.path === "string" ? AUDIT_PATH.exec(r.path) : null;
    if (!match || (r.operation !== "update" && r.operation !== "create")) return;
    const field = `selfInit.requests[${i}]`;
    let device: AuditDeviceView | undefined;
    if (isObject(r.auditDevice)) device = { ...r.auditDevice, path: match[1]! };
    else if (isObject(r.data) && typeof r.data["type"] === "string") {
      const { type, description, options } = r.data;
      device = {
        type,
        path: match[1]!,
        description: typeof description === "string" ? description : undefined,
        options: isObject(options) ? options : undefined,
      };
    }
    if (device)
      out.push({ device, field: `${field}.${r.auditDevice ? "auditDevice" : "data"}`, request: r.name });
  });
  return out;
}

/** Name of the one initialize stanza that holds every request, in spec order. */
export const SELF_INIT_BLOCK = "operator";

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const OPERATIONS = new Set(["create", "read", "update", "delete", "list", "patch"]);
const BODIES = ["data", "auditDevice", "authMethod", "secretEngine", "policy"] as const;

/**
 * The initialize stanzas for the cluster's self-init requests, or "" when self-init is off: first
 * selfInit.oidc's JWT bootstrap (from `oidc`, the observed issuer), then spec.recoveryKeys.initial's
 * recovery-key initialization, then the spec's requests.
 * Throws ConfigError naming the request field that cannot be rendered.
 */
export function renderSelfInitRequests(cluster: OpenBaoCluster, oidc?: OidcBootstrapFacts): string {
  const spec = specView(cluster);
  if (!spec.selfInit?.enabled) return "";
  const version = cluster.spec?.version;
  const requests = objectList<SelfInitRequestView>(spec.selfInit.requests, "selfInit.requests");
  const seen = new Set<string>();
  const declaredAudit = new Set(selfInitAuditDevices(cluster).map((d) => d.request));
  const body = requests.map((r, i): HclNode | undefined => {
    const field = `selfInit.requests[${i}]`;
    if (typeof r.name !== "string" || !NAME.test(r.name))
      throw new ConfigError(`${field}.name`, "must match ^[A-Za-z_][A-Za-z0-9_-]*$");
    if (seen.has(r.name)) throw new ConfigError(`${field}.name`, "is used by another request");
    seen.add(r.name);
    if (!OPERATIONS.has(r.operation))
      throw new ConfigError(`${field}.operation`, "must be one of create, read, update, delete, list, patch");
    if (typeof r.path !== "string" || r.path === "") throw new ConfigError(`${field}.path`, "is required");
    if (declaredAudit.has(r.name)) return undefined;
    if (
      AUDIT_PATH.test(r.path) &&
      r.operation !== "read" &&
      r.operation !== "list" &&
      !spec.configuration?.unsafeAllowAPIAuditCreation
    )
      throw new ConfigError(
        `${field}.path`,
        "OpenBao refuses audit devices changed through its API; declare them in spec.audit (or set configuration.unsafeAllowAPIAuditCreation)",
      );
    const data = requestData(r, field);
    return block(
      "request",
      [r.name],
      [
        ...attrs(
          {
            operation: r.operation,
            path: r.path,
            allow_failure: r.allowFailure || undefined,
            headers: requestHeaders(r, version, field),
            when: requestWhen(r, version, field),
          },
          field,
        ),
        ...(data === undefined ? [] : [block("data", [], dataAttributes(data, field))]),
      ],
    );
  });
  const kept = body.filter((n): n is HclNode => n !== undefined);
  const bootstrap = oidcBootstrapBlock(cluster, oidc);
  const recovery = recoveryKeysBlock(cluster);
  return `${renderNodes([
    ...(bootstrap ? [bootstrap] : []),
    ...(recovery ? [recovery] : []),
    block("initialize", [SELF_INIT_BLOCK], kept),
  ])}\n`;
}

/** OpenBao's request profiles take `headers` and `when` from 2.6 on; older releases refuse the keys. */
const HEADERS_AND_WHEN_SINCE = { major: 2, minor: 6, patch: 0 };

/**
 * `headers` as OpenBao's profile engine reads them: header name to a list of values. A name with
 * surrounding blanks would reach OpenBao as a different header than the user wrote, so it is refused.
 */
function requestHeaders(
  r: SelfInitRequestView,
  version: string | undefined,
  field: string,
): HclObject | undefined {
  if (r.headers === undefined) return undefined;
  const at = `${field}.headers`;
  if (!isObject(r.headers)) throw new ConfigError(at, "must be an object of header name to a list of values");
  requireRelease(version, HEADERS_AND_WHEN_SINCE, at);
  const out: Record<string, HclValue> = record();
  for (const [name, values] of Object.entries(r.headers)) {
    if (name.trim() === "" || name !== name.trim())
      throw new ConfigError(at, `header name ${JSON.stringify(name)} is empty or has surrounding blanks`);
    if (!Array.isArray(values)) throw new ConfigError(`${at}.${name}`, "must be a list of strings");
    out[name] = values.map((v, i) => {
      if (typeof v !== "string") throw new ConfigError(`${at}.${name}[${i}]`, "must be a string");
      return v;
    });
  }
  return out as HclObject;
}

/** `when` is OpenBao's to evaluate (a boolean, or one of its evaluation sources): passed on as given. */
function requestWhen(
  r: SelfInitRequestView,
  version: string | undefined,
  field: string,
): HclValue | undefined {
  if (r.when === undefined) return undefined;
  requireRelease(version, HEADERS_AND_WHEN_SINCE, `${field}.when`);
  return toHcl(r.when, `${field}.when`);
}

function dataAttributes(data: HclObject, field: string): HclNode[] {
  return Object.entries(data).map(([k, v]) => ({
    kind: "attribute",
    key: k,
    value: v as HclValue,
    field: `${field}.data.${k}`,
  }));
}

/** The request body: `data` as given, or one of the structured bodies turned into the API's shape. */
function requestData(r: SelfInitRequestView, field: string): HclObject | undefined {
  const given = BODIES.filter((b) => r[b] !== undefined);
  if (given.length > 1)
    throw new ConfigError(field, `give only one request body; found ${given.join(" and ")}`);
  const which = given[0];
  if (which === undefined) return undefined;
  const value = r[which] as unknown;
  if (!isObject(value)) throw new ConfigError(`${field}.${which}`, "must be an object");
  switch (which) {
    case "data":
      return toHcl(value, `${field}.data`) as HclObject;
    case "auditDevice": {
      const device = value as unknown as NonNullable<SelfInitRequestView["auditDevice"]>;
      return compact({
        type: device.type,
        description: device.description,
        options: auditOptions({ ...device, path: r.path }, `${field}.auditDevice`),
      });
    }
    case "authMethod":
      return compact({
        type: required(value, "type", `${field}.authMethod`),
        description: value["description"],
        config: stringMap(value["config"], `${field}.authMethod.config`),
      });
    case "secretEngine":
      return compact({
        type: required(value, "type", `${field}.secretEngine`),
        description: value["description"],
        options: stringMap(value["options"], `${field}.secretEngine.options`),
      });
    case "policy":
      return { policy: required(value, "policy", `${field}.policy`) };
  }
}

function required(obj: FreeForm, name: string, field: string): string {
  const v = obj[name];
  if (typeof v !== "string" || v === "") throw new ConfigError(`${field}.${name}`, "is required");
  return v;
}

function stringMap(value: unknown, field: string): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new ConfigError(field, "must be an object");
  const out: Record<string, string> = record();
  for (const [k, v] of Object.entries(value)) out[k] = stringValue(v, `${field}.${k}`);
  return out;
}

function compact(values: Record<string, unknown>): HclObject {
  const out: Record<string, HclValue> = record();
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    if (isObject(v) && Object.keys(v).length === 0) continue;
    out[k] = v as HclValue;
  }
  return out;
}
