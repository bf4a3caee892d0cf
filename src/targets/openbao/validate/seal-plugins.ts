/**
 * OpenBao 2.7 took the cloud and HSM seals out of its binary: awskms, azurekeyvault, gcpckms, ocikms
 * and pkcs11 are served by an external KMS plugin from then on. A 2.7 server with one of those seals
 * and no plugin declared cannot unseal, so (as upstream 0.5 does) the operator refuses to prepare the
 * workload or start an upgrade to 2.7 until spec.plugins declares it (type kms, name = the seal
 * type). It checks the declaration only, not that the plugin reaches the provider. static, transit
 * and kmip stay built in.
 */
import { parseVersion } from "./values.js";

/** The seals OpenBao 2.7 serves through a KMS plugin of the same name. */
export const PLUGIN_SEALS: readonly string[] = ["awskms", "azurekeyvault", "gcpckms", "ocikms", "pkcs11"];

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** True from OpenBao 2.7.0 on (its pre-releases included); false when the version does not parse. */
export function sealsArePlugins(version: unknown): boolean {
  const v = typeof version === "string" ? parseVersion(version) : undefined;
  return !!v && (v.major > 2 || (v.major === 2 && v.minor >= 7));
}

/** The field and why, when spec.version and spec.unseal need a KMS plugin spec.plugins lacks. */
export function sealPluginProblem(spec: unknown): { field: string; message: string } | undefined {
  if (!isObject(spec) || !sealsArePlugins(spec["version"])) return undefined;
  const type = isObject(spec["unseal"]) ? spec["unseal"]["type"] : undefined;
  if (typeof type !== "string" || !PLUGIN_SEALS.includes(type)) return undefined;
  const plugins = Array.isArray(spec["plugins"]) ? spec["plugins"] : [];
  if (plugins.some((p) => isObject(p) && p["type"] === "kms" && p["name"] === type)) return undefined;
  return {
    field: "spec.plugins",
    message: `OpenBao ${String(spec["version"])} serves the ${type} seal through an external KMS plugin: declare it (type: kms, name: ${type}, with its image or command) before using ${spec["version"]}; nothing is rolled until then`,
  };
}
