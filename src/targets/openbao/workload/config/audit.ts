/**
 * Declarative audit devices. OpenBao refuses to enable audit devices through its API unless told
 * otherwise, so the spec's devices become `audit "<type>" "<path>"` stanzas, which the active node
 * enables on start and on SIGHUP (and disables when a stanza goes away).
 */
import { ConfigError } from "./errors.js";
import { attrs, block, type HclBlock } from "./hcl.js";
import type { AuditDeviceView, FreeForm } from "./spec-view.js";
import { isObject, record, stringValue } from "./values.js";

/** The device's options as OpenBao's string-to-string map, from the typed blocks and `options`. */
export function auditOptions(device: AuditDeviceView, field: string): Record<string, string> {
  const out: Record<string, string> = record();
  const put = (name: string, value: unknown, at: string) => {
    if (value === undefined) return;
    if (Object.hasOwn(out, name)) throw new ConfigError(at, `sets ${name} a second time`);
    out[name] = stringValue(value, at);
  };
  const typed: Record<string, [string, Record<string, string>]> = {
    file: ["fileOptions", { filePath: "file_path", mode: "mode" }],
    syslog: ["syslogOptions", { facility: "facility", tag: "tag" }],
    socket: [
      "socketOptions",
      { address: "address", socketType: "socket_type", writeTimeout: "write_timeout" },
    ],
    http: ["httpOptions", { uri: "uri" }],
  };
  for (const [type, [blockName, names]] of Object.entries(typed)) {
    const given = (device as unknown as FreeForm)[blockName];
    if (given === undefined) continue;
    if (type !== device.type)
      throw new ConfigError(`${field}.${blockName}`, `belongs to audit devices of type ${type}`);
    if (!isObject(given)) throw new ConfigError(`${field}.${blockName}`, "must be an object");
    for (const [k, v] of Object.entries(given)) {
      if (k === "headers" && type === "http") {
        put("headers", httpHeaders(v, `${field}.${blockName}.headers`), `${field}.${blockName}.headers`);
        continue;
      }
      const name = Object.hasOwn(names, k) ? names[k] : undefined;
      if (!name)
        throw new ConfigError(`${field}.${blockName}.${k}`, `is not an option of ${type} audit devices`);
      put(name, v, `${field}.${blockName}.${k}`);
    }
  }
  if (device.options !== undefined) {
    if (!isObject(device.options)) throw new ConfigError(`${field}.options`, "must be an object");
    for (const [k, v] of Object.entries(device.options)) put(k, v, `${field}.options.${k}`);
  }
  return out;
}

/** OpenBao's http device takes its headers as a JSON object of string lists. */
function httpHeaders(value: unknown, field: string): string {
  if (!isObject(value)) throw new ConfigError(field, "must be an object of header names");
  const out: Record<string, string[]> = record();
  for (const [name, v] of Object.entries(value)) {
    const list = Array.isArray(v) ? v : [v];
    out[name] = list.map((item, i) =>
      stringValue(item, `${field}.${name}${Array.isArray(v) ? `[${i}]` : ""}`),
    );
  }
  return JSON.stringify(out);
}

const AUDIT_TYPES = new Set(["file", "syslog", "socket", "http"]);

/** An audit device and the spec field it comes from, for error messages. */
export interface PlacedAuditDevice {
  device: AuditDeviceView;
  field: string;
}

export function renderAuditDevices(devices: PlacedAuditDevice[]): HclBlock[] {
  const seen = new Set<string>();
  return devices.map(({ device, field }) => {
    if (!AUDIT_TYPES.has(device.type))
      throw new ConfigError(`${field}.type`, "must be one of file, syslog, socket, http");
    if (typeof device.path !== "string" || device.path === "")
      throw new ConfigError(`${field}.path`, "is required");
    // OpenBao stores mount paths with a trailing slash; "a" and "a/" are the same device.
    const path = device.path.endsWith("/") ? device.path : `${device.path}/`;
    if (seen.has(path)) throw new ConfigError(`${field}.path`, "is used by another audit device");
    seen.add(path);
    const options = auditOptions(device, field);
    if (device.type === "file" && options["file_path"] === undefined)
      throw new ConfigError(`${field}.fileOptions.filePath`, "is required for file audit devices");
    if (device.type === "http" && options["uri"] === undefined)
      throw new ConfigError(`${field}.httpOptions.uri`, "is required for http audit devices");
    return block(
      "audit",
      [device.type, device.path],
      [
        ...attrs({ description: device.description }, field),
        ...(Object.keys(options).length > 0
          ? [block("options", [], attrs(options, `${field}.options`))]
          : []),
      ],
    );
  });
}
