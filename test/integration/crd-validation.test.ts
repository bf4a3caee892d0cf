import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { parse, parseAllDocuments } from "yaml";
import type { JSONSchemaProps } from "../../src/apis/crd.js";
import { CUSTOM_RESOURCE_DEFINITION } from "../../src/runtime/builtin-types.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { ApiError } from "../../src/runtime/errors.js";
import type { KubeObject, ResourceType } from "../../src/runtime/types.js";
import { sharedEnv } from "../../src/testenv/shared.js";
import {
  constraintId,
  fullInstance,
  getAt,
  type Json,
  type JsonObject,
  schemaAt,
  sectionConstraints,
  type Violation,
  violationsOf,
} from "../support/crd-instances.js";
import { clientFor, eventually, freshNamespace } from "../support/kube.js";

// The generated CRDs, installed as a user would, checked by the API server itself: every sample and a
// full object of every union branch is accepted; every enum, bound, pattern, list size and required
// field, and every CEL rule, rejects what it must with a 422 that names the field.

const root = fileURLToPath(new URL("../../../", import.meta.url));
const CRD_DIR = join(root, "deploy/crds");
const SAMPLE_DIR = join(root, "deploy/samples");

interface CrdFile {
  type: ResourceType;
  schema: JSONSchemaProps;
  /** Every CEL rule by schema path, with its message. */
  rules: { path: string; message: string }[];
}

function loadCrd(fileName: string): KubeObject & { spec: Record<string, never> } {
  return parse(readFileSync(join(CRD_DIR, fileName), "utf8"));
}

function describeCrd(crd: ReturnType<typeof loadCrd>): CrdFile {
  const spec = crd.spec as unknown as {
    group: string;
    scope: string;
    names: { kind: string; plural: string };
    versions: { name: string; schema: { openAPIV3Schema: JSONSchemaProps } }[];
  };
  const version = spec.versions[0]!;
  const schema = version.schema.openAPIV3Schema;
  const rules: CrdFile["rules"] = [];
  const walk = (s: JSONSchemaProps, path: string) => {
    for (const r of s["x-kubernetes-validations"] ?? []) rules.push({ path, message: String(r["message"]) });
    for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${path}.${k}`);
    if (s.items) walk(s.items, `${path}[]`);
    if (s.additionalProperties) walk(s.additionalProperties, `${path}{}`);
  };
  walk(schema, "");
  return {
    type: {
      group: spec.group,
      version: version.name,
      kind: spec.names.kind,
      plural: spec.names.plural,
      namespaced: spec.scope === "Namespaced",
    },
    schema,
    rules,
  };
}

/** A CEL rule's check: `bad` must be refused naming `field`; `good`, when given, must pass. */
interface CelCase {
  message: string;
  field: string;
  bad: (o: JsonObject, part: (path: string) => Json) => void;
  good?: (o: JsonObject) => void;
  /** Transition rules: the object is created valid, then `bad`/`good` are applied as updates. */
  update?: boolean;
}

interface KindUnderTest {
  kind: string;
  crdFile: string;
  /** Makes a full instance valid (one branch of each union), in place. */
  base: (o: JsonObject, part: (path: string) => Json) => void;
  /** The other branches of the unions, each applied to a copy of the base. */
  variants: ((o: JsonObject, part: (path: string) => Json) => void)[];
  cel: CelCase[];
}

const spec = (o: JsonObject) => o["spec"] as JsonObject;
const at = (o: JsonObject, ...keys: string[]): JsonObject => {
  let x = o;
  for (const k of keys) x = x[k] as JsonObject;
  return x;
};

const UNSEAL: [type: string, field: string][] = [
  ["static", "static"],
  ["transit", "transit"],
  ["awskms", "awskms"],
  ["gcpckms", "gcpCloudKMS"],
  ["azurekeyvault", "azureKeyVault"],
  ["kmip", "kmip"],
  ["ocikms", "ocikms"],
  ["pkcs11", "pkcs11"],
  ["kms", "kms"],
];

function oneUnseal(
  o: JsonObject,
  part: (path: string) => Json,
  type: string,
  field: string | undefined,
): void {
  const unseal = at(o, "spec", "unseal");
  for (const [, f] of UNSEAL) delete unseal[f];
  unseal["type"] = type;
  if (field) unseal[field] = sealBlock(part, field);
}

/** A complete seal block that also meets the block's own rules (one of slot and tokenLabel, API-key auth with a credentials Secret). */
function sealBlock(part: (path: string) => Json, field: string): JsonObject {
  const block = part(`.spec.unseal.${field}`) as JsonObject;
  if (field === "pkcs11") delete block["tokenLabel"];
  if (field === "ocikms") block["authTypeAPIKey"] = true;
  return block;
}

const AUDIT_TYPES = ["file", "http", "socket", "syslog"] as const;

/** An audit device of one type, carrying only that type's options block. */
function oneAuditType(device: JsonObject, full: JsonObject, type: string): void {
  for (const t of AUDIT_TYPES) delete device[`${t}Options`];
  device["type"] = type;
  device[`${type}Options`] = full[`${type}Options`] as Json;
}

/** A claim volume in one mode, with only the fields that mode takes. */
function oneVolumeMode(volume: JsonObject, mode: "ManagedPVC" | "ExistingPVC"): void {
  volume["mode"] = mode;
  if (mode === "ManagedPVC") delete volume["existingClaimName"];
  else {
    delete volume["size"];
    delete volume["storageClassName"];
  }
}

function oneProvider(target: JsonObject, part: Json | undefined, provider: string): void {
  delete target["gcs"];
  delete target["azure"];
  if (provider !== "s3") delete target["roleArn"];
  target["provider"] = provider;
  if (part !== undefined) target[provider] = part;
}

/** The five rules of a managed-or-existing claim volume, each broken once and fixed. */
function volumeCases(field: string, path: string, volume: (o: JsonObject) => JsonObject): CelCase[] {
  const managed = { mode: "ManagedPVC", size: "1Gi" };
  const existing = { mode: "ExistingPVC", existingClaimName: "claim" };
  const with_ = (extra: JsonObject) => (o: JsonObject) => {
    Object.assign(volume(o), extra);
  };
  return [
    {
      message: `${field}.size applies to mode ManagedPVC only`,
      field: path,
      bad: with_({ ...existing, size: "1Gi" }),
      good: with_(existing),
    },
    {
      message: `${field}.storageClassName applies to mode ManagedPVC only`,
      field: path,
      bad: with_({ ...existing, storageClassName: "fast" }),
      good: with_({ ...managed, storageClassName: "fast" }),
    },
    {
      message: `${field}.existingClaimName must name the claim when mode is ExistingPVC`,
      field: path,
      bad: with_({ mode: "ExistingPVC" }),
      good: with_(existing),
    },
    {
      message: `${field}.existingClaimName applies to mode ExistingPVC only`,
      field: path,
      bad: with_({ ...managed, existingClaimName: "claim" }),
      good: with_(managed),
    },
    {
      message: `${field}.size must be set when mode is ManagedPVC`,
      field: path,
      bad: with_({ mode: "ManagedPVC" }),
      good: with_(managed),
    },
  ];
}

function recoveryKeyCases(): CelCase[] {
  const keys = (shares: number, threshold: number, recipients: number): Json => ({
    initial: {
      shares,
      threshold,
      recipients: Array.from({ length: recipients }, (_, i) => ({ name: `r${i}`, pgpPublicKey: "a2V5" })),
    },
  });
  const ready = (o: JsonObject, part: (path: string) => Json) => {
    oneUnseal(o, part, "transit", "transit");
    at(o, "spec", "selfInit")["enabled"] = true;
  };
  return [
    {
      message: "recoveryKeys.initial.threshold may not exceed shares",
      field: "spec.recoveryKeys.initial",
      bad: (o, part) => {
        ready(o, part);
        spec(o)["recoveryKeys"] = keys(1, 2, 1);
      },
    },
    {
      message: "recoveryKeys.initial needs exactly one recipient per share",
      field: "spec.recoveryKeys.initial",
      bad: (o, part) => {
        ready(o, part);
        spec(o)["recoveryKeys"] = keys(2, 1, 1);
      },
    },
    {
      message: "recoveryKeys.initial needs selfInit.enabled: true",
      field: "spec",
      bad: (o, part) => {
        ready(o, part);
        at(o, "spec", "selfInit")["enabled"] = false;
        spec(o)["recoveryKeys"] = keys(1, 1, 1);
      },
    },
    {
      message: "recoveryKeys.initial needs an auto-unseal (unseal.type other than static)",
      field: "spec",
      bad: (o) => {
        at(o, "spec", "selfInit")["enabled"] = true;
        spec(o)["recoveryKeys"] = keys(1, 1, 1);
      },
    },
  ];
}

/** Upstream 0.5's rule of an object-store target: roleArn is for s3 only. */
function targetCases(path: string, target: (o: JsonObject) => JsonObject): CelCase[] {
  return [
    {
      message: "target.roleArn belongs to provider s3 only",
      field: path,
      bad: (o) => {
        const t = target(o);
        oneProvider(t, { project: "p" }, "gcs");
        t["roleArn"] = "arn:aws:iam::1:role/backup";
      },
    },
  ];
}

const KINDS: KindUnderTest[] = [
  {
    kind: "GitLabCore",
    crdFile: "apps.gitlab.com_gitlabcores.yaml",
    base(o) {
      spec(o)["version"] = { type: "Static", version: "9.4.1" };
      const networking = at(o, "spec", "networking");
      delete networking["gatewayClass"];
      delete networking["gateway"];
      // One of each pair the schema makes exclusive: hostname (not domain), spec.openbao (not its
      // newer name under components), a Secret (not a ConfigMap) per trusted CA.
      delete spec(o)["domain"];
      delete spec(o)["components"];
      delete (at(o, "spec", "certificates")["customCAs"] as JsonObject[])[0]!["configMap"];
      at(o, "spec", "clickhouse")["url"] = "https://clickhouse.example.org:8443";
    },
    variants: [
      (o) => {
        spec(o)["version"] = {
          type: "Static",
          versionRef: { kind: "ConfigMap", name: "versions", key: "gitlab" },
        };
      },
      (o) => {
        spec(o)["version"] = { type: "Patch", minor: "9.4" };
      },
      (o) => {
        spec(o)["version"] = { type: "Latest" };
      },
      (o) => {
        spec(o)["version"] = { type: "Latest", major: 9 };
      },
      (o) => {
        spec(o)["version"] = { type: "Previous", major: 9 };
      },
      (o) => {
        spec(o)["version"] = { type: "OldestSupported", major: 9 };
      },
      (o, part) => {
        spec(o)["networking"] = { gatewayClass: part(".spec.networking.gatewayClass") };
      },
      (o) => {
        delete spec(o)["hostname"];
        spec(o)["domain"] = "example.org";
      },
      (o) => {
        spec(o)["components"] = { openbao: spec(o)["openbao"] as Json };
        delete spec(o)["openbao"];
      },
      (o) => {
        at(o, "spec", "certificates")["customCAs"] = [{ configMap: "company-cas", keys: ["ca.crt"] }];
      },
      (o, part) => {
        spec(o)["networking"] = { gateway: part(".spec.networking.gateway") };
      },
      (o) => {
        spec(o)["networking"] = {};
      },
    ],
    cel: [
      {
        message: "set at most one of envoyGatewayController, gatewayClass and gateway",
        field: "spec.networking",
        bad: (o) => {
          at(o, "spec", "networking")["gateway"] = { name: "shared" };
        },
      },
      {
        message: "type Static takes exactly one of version and versionRef",
        field: "spec.version",
        bad: (o) => {
          at(o, "spec", "version")["versionRef"] = { kind: "ConfigMap", name: "versions", key: "gitlab" };
        },
      },
      {
        message: "version and versionRef belong to type Static only",
        field: "spec.version",
        bad: (o) => {
          spec(o)["version"] = { type: "Latest", version: "9.4.1" };
        },
      },
      {
        message: "type Patch needs minor",
        field: "spec.version",
        bad: (o) => {
          spec(o)["version"] = { type: "Patch" };
        },
      },
      {
        message: "minor belongs to type Patch only",
        field: "spec.version",
        bad: (o) => {
          at(o, "spec", "version")["minor"] = "9.4";
        },
      },
      {
        message: "major belongs to types Latest, Previous and OldestSupported only",
        field: "spec.version",
        bad: (o) => {
          at(o, "spec", "version")["major"] = 9;
        },
      },
      {
        message: "set exactly one of hostname and domain",
        field: "spec",
        bad: (o) => {
          spec(o)["domain"] = "example.org";
        },
      },
      {
        message: "set spec.components.openbao or spec.openbao, not both",
        field: "spec",
        bad: (o) => {
          spec(o)["components"] = { openbao: structuredClone(spec(o)["openbao"]) as Json };
        },
      },
      {
        message: "set exactly one of secret and configMap",
        field: "spec.certificates.customCAs[0]",
        bad: (o) => {
          (at(o, "spec", "certificates")["customCAs"] as JsonObject[])[0]!["configMap"] = "company-cas";
        },
      },
      {
        message: "url must be an http:// or https:// URL",
        field: "spec.clickhouse.url",
        bad: (o) => {
          at(o, "spec", "clickhouse")["url"] = "clickhouse.example.org:9000";
        },
      },
      {
        message: "envoyGatewayController.controllerName cannot be changed",
        field: "spec.networking.envoyGatewayController.controllerName",
        update: true,
        bad: (o) => {
          at(o, "spec", "networking", "envoyGatewayController")["controllerName"] =
            "example.org/another-controller";
        },
        good: (o) => {
          spec(o)["edition"] = "ce";
        },
      },
    ],
  },
  {
    kind: "VaultSeed",
    crdFile: "ohmlab.fr_vaultseeds.yaml",
    base(o) {
      spec(o)["data"] = { password: "<random:16>", nested: { hash: "<bcrypt:password>" } };
    },
    variants: [],
    cel: [
      {
        message: "path is immutable: delete this VaultSeed and create another for the new path",
        field: "spec.path",
        update: true,
        bad: (o) => {
          spec(o)["path"] = "secret/apps/elsewhere";
        },
        good: (o) => {
          spec(o)["data"] = { other: "<uuid>" };
        },
      },
      {
        message: "rotate needs a token, a period (every), or both",
        field: "spec.rotate",
        bad: (o) => {
          spec(o)["rotate"] = { keys: ["password"] };
        },
        good: (o) => {
          spec(o)["rotate"] = { every: "720h", keys: ["password"] };
        },
      },
    ],
  },
  {
    kind: "OpenBaoCluster",
    crdFile: "openbao.org_openbaoclusters.yaml",
    base(o, part) {
      oneUnseal(o, part, "static", "static");
      const tls = at(o, "spec", "tls");
      tls["mode"] = "OperatorManaged";
      delete tls["acme"];
      oneProvider(at(o, "spec", "backup", "target"), undefined, "s3");
      // Recovery keys need self-init and an auto-unseal: a variant of their own below.
      delete spec(o)["recoveryKeys"];
      // Refused as upstream refuses it: a CEL case of its own below.
      delete at(o, "spec", "upgrade")["tokenSecretRef"];
      at(o, "spec", "selfInit", "oidc")["enabled"] = true;
      // Hybrid key exchange alone needs TLS 1.3 (a CEL case below).
      Object.assign(at(o, "spec", "configuration", "listener"), {
        tlsMinVersion: "tls13",
        tlsMaxVersion: "tls13",
      });
      const afs = at(o, "spec", "auditFileStorage");
      oneVolumeMode(afs, "ManagedPVC");
      afs["mountPath"] = "/openbao/audit";
      const audit = (spec(o)["audit"] as JsonObject[])[0]!;
      oneAuditType(audit, structuredClone(audit), "file");
      const request = (at(o, "spec", "selfInit")["requests"] as JsonObject[])[0]!;
      const device = request["auditDevice"] as JsonObject;
      oneAuditType(device, structuredClone(device), "file");
    },
    variants: [
      ...UNSEAL.map(
        ([type, field]) =>
          (o: JsonObject, part: (path: string) => Json) =>
            oneUnseal(o, part, type, field),
      ),
      (o, part) => {
        const tls = at(o, "spec", "tls");
        tls["mode"] = "ACME";
        tls["acme"] = part(".spec.tls.acme");
        delete at(o, "spec", "tls", "acme")["domains"];
        oneVolumeMode(at(o, "spec", "tls", "acme", "sharedCache"), "ManagedPVC");
      },
      (o, part) => {
        const tls = at(o, "spec", "tls");
        tls["mode"] = "ACME";
        tls["acme"] = part(".spec.tls.acme");
        delete at(o, "spec", "tls", "acme")["domain"];
        oneVolumeMode(at(o, "spec", "tls", "acme", "sharedCache"), "ManagedPVC");
      },
      (o, part) => oneProvider(at(o, "spec", "backup", "target"), part(".spec.backup.target.gcs"), "gcs"),
      (o, part) => oneProvider(at(o, "spec", "backup", "target"), part(".spec.backup.target.azure"), "azure"),
      (o, part) => {
        oneUnseal(o, part, "pkcs11", undefined);
        const block = part(".spec.unseal.pkcs11") as JsonObject;
        delete block["slot"];
        at(o, "spec", "unseal")["pkcs11"] = block;
      },
      (o, part) => {
        oneUnseal(o, part, "transit", "transit");
        at(o, "spec", "selfInit")["enabled"] = true;
        spec(o)["recoveryKeys"] = part(".spec.recoveryKeys");
      },
      (o, part) => {
        const tls = at(o, "spec", "tls");
        tls["mode"] = "ACME";
        tls["acme"] = part(".spec.tls.acme");
        delete at(o, "spec", "tls", "acme")["domain"];
        oneVolumeMode(at(o, "spec", "tls", "acme", "sharedCache"), "ExistingPVC");
      },
      (o, part) => {
        const afs = part(".spec.auditFileStorage") as JsonObject;
        oneVolumeMode(afs, "ExistingPVC");
        afs["mountPath"] = "/openbao/audit";
        spec(o)["auditFileStorage"] = afs;
      },
      ...AUDIT_TYPES.filter((t) => t !== "file").map((t) => (o: JsonObject, part: (path: string) => Json) => {
        oneAuditType((spec(o)["audit"] as JsonObject[])[0]!, part(".spec.audit.[]") as JsonObject, t);
        const request = (at(o, "spec", "selfInit")["requests"] as JsonObject[])[0]!;
        oneAuditType(
          request["auditDevice"] as JsonObject,
          part(".spec.selfInit.requests.[].auditDevice") as JsonObject,
          t,
        );
      }),
    ],
    cel: [
      {
        message:
          "spec.upgrade.tokenSecretRef is not supported (upstream refuses it since 0.1.0): set spec.upgrade.jwtAuthRole, or enable spec.selfInit.oidc, whose bootstrap creates the upgrade role",
        field: "spec.upgrade.tokenSecretRef",
        bad: (o) => {
          at(o, "spec", "upgrade")["tokenSecretRef"] = { name: "upgrade-token" };
        },
      },
      {
        message: "target.gcs belongs to provider gcs only",
        field: "spec.backup.target",
        bad: (o) => {
          at(o, "spec", "backup", "target")["gcs"] = { project: "p" };
        },
      },
      {
        message: "target.azure belongs to provider azure only",
        field: "spec.backup.target",
        bad: (o) => {
          at(o, "spec", "backup", "target")["azure"] = { container: "c" };
        },
      },
      {
        message: "storage.size may only grow",
        field: "spec.storage.size",
        update: true,
        bad: (o) => {
          at(o, "spec", "storage")["size"] = "5Gi";
        },
        good: (o) => {
          at(o, "spec", "storage")["size"] = "20Gi";
        },
      },
      {
        message: "set tls.acme.domain or tls.acme.domains, not both",
        field: "spec.tls.acme",
        bad: (o) => {
          const tls = at(o, "spec", "tls");
          tls["mode"] = "ACME";
          tls["acme"] = {
            directoryURL: "https://acme.example.org/directory",
            domain: "bao.example.org",
            domains: ["bao.example.org"],
          };
        },
      },
      {
        message: "tlsMaxVersion must be greater than or equal to tlsMinVersion",
        field: "spec.configuration.listener.tlsMaxVersion",
        bad: (o) => {
          at(o, "spec", "configuration", "listener")["tlsMaxVersion"] = "tls12";
        },
      },
      {
        message:
          "tlsKeyExchangePreferences with only hybrid post-quantum groups requires tlsMinVersion tls13",
        field: "spec.configuration.listener.tlsMinVersion",
        bad: (o) => {
          Object.assign(at(o, "spec", "configuration", "listener"), {
            tlsMinVersion: "tls12",
            tlsKeyExchangePreferences: ["X25519MLKEM768", "SecP384r1MLKEM1024"],
          });
        },
        good: (o) => {
          Object.assign(at(o, "spec", "configuration", "listener"), {
            tlsMinVersion: "tls12",
            tlsKeyExchangePreferences: ["X25519MLKEM768", "X25519"],
          });
        },
      },
      {
        message: "tls.mode ACME needs tls.acme",
        field: "spec.tls",
        bad: (o) => {
          at(o, "spec", "tls")["mode"] = "ACME";
        },
      },
      // Upstream 0.5 lets tls.acme stay outside ACME mode; only its shared cache is refused there.
      {
        message: "tls.acme.sharedCache belongs to tls.mode ACME only",
        field: "spec.tls",
        bad: (o) => {
          at(o, "spec", "tls")["acme"] = {
            directoryURL: "https://acme.example.org/directory",
            sharedCache: { mode: "ManagedPVC", size: "1Gi" },
          };
        },
        good: (o) => {
          at(o, "spec", "tls")["acme"] = { directoryURL: "https://acme.example.org/directory" };
        },
      },
      ...volumeCases("tls.acme.sharedCache", "spec.tls.acme.sharedCache", (o) => {
        const tls = at(o, "spec", "tls");
        tls["mode"] = "ACME";
        tls["acme"] = { directoryURL: "https://acme.example.org/directory", sharedCache: {} };
        return at(o, "spec", "tls", "acme", "sharedCache");
      }),
      ...volumeCases("auditFileStorage", "spec.auditFileStorage", (o) => {
        spec(o)["auditFileStorage"] = {};
        return at(o, "spec", "auditFileStorage");
      }),
      {
        message: "auditFileStorage.mountPath must be an absolute path other than /",
        field: "spec.auditFileStorage",
        bad: (o) => {
          at(o, "spec", "auditFileStorage")["mountPath"] = "/";
        },
        good: (o) => {
          at(o, "spec", "auditFileStorage")["mountPath"] = "/var/audit";
        },
      },
      ...recoveryKeyCases(),
      ...AUDIT_TYPES.flatMap((t): CelCase[] => {
        const other = AUDIT_TYPES.find((x) => x !== t)!;
        const carry = (device: JsonObject, full: JsonObject) => {
          oneAuditType(device, full, other);
          device[`${t}Options`] = full[`${t}Options`] as Json;
        };
        return [
          {
            message: `audit[].${t}Options belongs to type ${t} only`,
            field: "spec.audit[0]",
            bad: (o, part) =>
              carry((spec(o)["audit"] as JsonObject[])[0]!, part(".spec.audit.[]") as JsonObject),
          },
          {
            message: `auditDevice.${t}Options belongs to type ${t} only`,
            field: "spec.selfInit.requests[0].auditDevice",
            bad: (o, part) =>
              carry(
                (at(o, "spec", "selfInit")["requests"] as JsonObject[])[0]!["auditDevice"] as JsonObject,
                part(".spec.selfInit.requests.[].auditDevice") as JsonObject,
              ),
          },
        ];
      }),
      ...(["file", "http"] as const).map(
        (t): CelCase => ({
          message: `auditDevice type ${t} needs ${t}Options`,
          field: "spec.selfInit.requests[0].auditDevice",
          bad: (o) => {
            const device = (at(o, "spec", "selfInit")["requests"] as JsonObject[])[0]![
              "auditDevice"
            ] as JsonObject;
            for (const x of AUDIT_TYPES) delete device[`${x}Options`];
            device["type"] = t;
          },
        }),
      ),
      {
        message: "selfInit.oidc.additionalSubjects needs enabled: true",
        field: "spec.selfInit.oidc",
        bad: (o) => {
          at(o, "spec", "selfInit", "oidc")["enabled"] = false;
        },
        good: (o) => {
          delete at(o, "spec", "selfInit", "oidc")["additionalSubjects"];
          at(o, "spec", "selfInit", "oidc")["enabled"] = false;
        },
      },
      {
        message: "unseal.kmip needs endpoint, kmsKeyID, clientCert and clientKey",
        field: "spec.unseal.kmip",
        bad: (o, part) => {
          oneUnseal(o, part, "kmip", "kmip");
          const kmip = at(o, "spec", "unseal", "kmip");
          delete kmip["address"];
          delete kmip["kmsKeyID"];
        },
        // The earlier form: address alone.
        good: (o) => {
          const unseal = at(o, "spec", "unseal");
          delete unseal["static"];
          unseal["type"] = "kmip";
          unseal["kmip"] = { address: "kmip.example.org:5696" };
        },
      },
      {
        message: "unseal.pkcs11 takes slot or tokenLabel, not both",
        field: "spec.unseal.pkcs11",
        bad: (o, part) => {
          oneUnseal(o, part, "pkcs11", "pkcs11");
          at(o, "spec", "unseal", "pkcs11")["tokenLabel"] = "token";
        },
      },
      {
        message: "unseal.credentialsSecretRef with unseal.type ocikms needs ocikms.authTypeAPIKey: true",
        field: "spec.unseal",
        bad: (o, part) => {
          oneUnseal(o, part, "ocikms", "ocikms");
          at(o, "spec", "unseal", "ocikms")["authTypeAPIKey"] = false;
        },
        // The earlier spelling of API-key auth counts too.
        good: (o) => {
          const unseal = at(o, "spec", "unseal");
          delete unseal["static"];
          unseal["type"] = "ocikms";
          unseal["ocikms"] = {
            keyID: "ocid1.key",
            cryptoEndpoint: "https://crypto.example.org",
            managementEndpoint: "https://mgmt.example.org",
            authType: "APIKey",
          };
        },
      },
      ...targetCases("spec.backup.target", (o) => at(o, "spec", "backup", "target")),
      ...UNSEAL.flatMap(([type, field]): CelCase[] => {
        const other = UNSEAL.find(([t]) => t !== type)!;
        const cases: CelCase[] = [
          {
            message: `unseal.${field} belongs to unseal.type ${type} only`,
            field: "spec.unseal",
            // Another type, carrying this type's settings as well.
            // Both blocks complete: an incomplete one is refused before CEL rules run at all.
            bad: (o, part) => {
              const unseal = at(o, "spec", "unseal");
              unseal["type"] = other[0];
              unseal[other[1]] = part(`.spec.unseal.${other[1]}`);
              unseal[field] = part(`.spec.unseal.${field}`);
            },
          },
        ];
        // "static" needs no settings of its own; every other type does.
        if (type !== "static")
          cases.push({
            message: `unseal.type ${type} needs unseal.${field}`,
            field: "spec.unseal",
            bad: (o) => {
              const unseal = at(o, "spec", "unseal");
              delete unseal["static"];
              unseal["type"] = type;
            },
          });
        return cases;
      }),
    ],
  },
  {
    kind: "OpenBaoRestore",
    crdFile: "openbao.org_openbaorestores.yaml",
    base(o) {
      spec(o)["force"] = false;
      spec(o)["overrideOperationLock"] = false;
      oneProvider(at(o, "spec", "source", "target"), undefined, "s3");
    },
    variants: [
      (o, part) => oneProvider(at(o, "spec", "source", "target"), part(".spec.source.target.gcs"), "gcs"),
      (o, part) => oneProvider(at(o, "spec", "source", "target"), part(".spec.source.target.azure"), "azure"),
      (o) => {
        spec(o)["force"] = true;
        spec(o)["overrideOperationLock"] = true;
      },
    ],
    cel: [
      {
        message: "an OpenBaoRestore is immutable: create a new one instead",
        field: "spec",
        update: true,
        bad: (o) => {
          spec(o)["cluster"] = "another-cluster";
        },
        // Labels are not the spec: the object as a whole stays editable.
        good: (o) => {
          at(o, "metadata")["labels"] = { reviewed: "yes" };
        },
      },
      {
        message: "overrideOperationLock needs force: true",
        field: "spec",
        bad: (o) => {
          spec(o)["overrideOperationLock"] = true;
        },
        good: (o) => {
          spec(o)["overrideOperationLock"] = true;
          spec(o)["force"] = true;
        },
      },
      {
        message: "target.gcs belongs to provider gcs only",
        field: "spec.source.target",
        bad: (o) => {
          at(o, "spec", "source", "target")["gcs"] = { project: "p" };
        },
      },
      {
        message: "target.azure belongs to provider azure only",
        field: "spec.source.target",
        bad: (o) => {
          at(o, "spec", "source", "target")["azure"] = { container: "c" };
        },
      },
      ...targetCases("spec.source.target", (o) => at(o, "spec", "source", "target")),
    ],
  },
];

interface Cause {
  field?: string;
  message?: string;
  reason?: string;
}

function causesOf(e: unknown): Cause[] {
  if (!(e instanceof ApiError)) throw e;
  assert.equal(e.code, 422, `expected 422 Invalid, got ${e.code}: ${e.message}`);
  return ((e.details as { causes?: Cause[] } | undefined)?.causes ?? []) as Cause[];
}

/** Fields kept in a schema only so values stored before keep reading, refused whenever set. */
const REFUSED_SUBTREES = [".spec.upgrade.tokenSecretRef"];

/** Runs `work` over `items`, `limit` at a time: hundreds of requests, without a burst. */
async function inPool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

describe("CRDs on the real API server", () => {
  let client: KubeClient;
  let ns: string;
  let counter = 0;
  const crds = new Map<string, CrdFile>();

  before(async () => {
    client = clientFor(sharedEnv().kubeconfigPath);
    for (const fileName of readdirSync(CRD_DIR).filter((f) => f.endsWith(".yaml"))) {
      const crd = loadCrd(fileName);
      await client.apply(CUSTOM_RESOURCE_DEFINITION, crd, { fieldManager: "test-setup", force: true });
      crds.set(fileName, describeCrd(crd));
    }
    await eventually(
      async () => {
        client.resources.refresh();
        const served = await Promise.all(
          [...crds.values()].map((c) =>
            client.resources.find(`${c.type.group}/${c.type.version}`, c.type.kind),
          ),
        );
        return served.every(Boolean) || undefined;
      },
      30_000,
      "the CRDs to be served",
    );
    ns = await freshNamespace(client, "crd-validation");
  });
  after(() => client.close());

  const named = (kind: string, o: JsonObject): KubeObject => {
    counter++;
    return {
      ...(o as unknown as KubeObject),
      metadata: {
        ...((o["metadata"] as object) ?? {}),
        name: `${kind.toLowerCase()}-${counter}`,
        namespace: ns,
      },
    };
  };

  for (const k of KINDS) {
    const crd = () => crds.get(k.crdFile)!;
    const part = (path: string): Json => fullInstance(schemaAt(crd().schema, path), path);
    const baseObject = (): JsonObject => {
      const { group, version, kind } = crd().type;
      const o: JsonObject = {
        apiVersion: `${group}/${version}`,
        kind,
        metadata: {},
        spec: part(".spec"),
      };
      k.base(o, part);
      return o;
    };
    const validObjects = (): JsonObject[] => [
      baseObject(),
      ...k.variants.map((variant) => {
        const o = baseObject();
        variant(o, part);
        return o;
      }),
    ];
    const create = (o: JsonObject) => client.create(crd().type, named(k.kind, o));

    describe(k.kind, () => {
      it("accepts the sample and a full object of every union branch", async () => {
        const samples = readdirSync(SAMPLE_DIR)
          .flatMap((f) => parseAllDocuments(readFileSync(join(SAMPLE_DIR, f), "utf8")).map((d) => d.toJS()))
          .filter((d: { kind?: string } | null) => d?.kind === k.kind) as JsonObject[];
        const objects = [...samples, ...validObjects()];
        for (const o of objects) {
          try {
            await create(o);
          } catch (e) {
            assert.fail(
              `a valid ${k.kind} was refused: ${(e as Error).message}\n${JSON.stringify(o["spec"])}`,
            );
          }
        }
      });

      it("refuses a broken enum, bound, pattern, list size or required field, naming the field", async () => {
        const violations = new Map<string, Violation>();
        for (const o of validObjects())
          for (const [id, v] of violationsOf(crd().schema, o)) if (!violations.has(id)) violations.set(id, v);
        // Every constraint of the spec is met by some valid object, so none goes untried.
        const untried = sectionConstraints(crd().schema)
          .map(constraintId)
          .filter((id) => !violations.has(id))
          // A field refused as a whole by its own CEL rule: no valid object holds it.
          .filter((id) => !REFUSED_SUBTREES.some((p) => id.startsWith(p)));
        assert.deepEqual(untried, [], "constraints no valid object reaches");

        const wrong: string[] = [];
        await inPool([...violations.values()], 4, async (v) => {
          const objects = validObjects();
          const o = objects.find((x) => violationsOf(crd().schema, x).has(constraintId(v.constraint)))!;
          v.apply(o);
          try {
            const stored = await create(o);
            if (!v.defaulted) wrong.push(`${constraintId(v.constraint)}: accepted`);
            else if (
              !isDeepStrictEqual(getAt(stored as unknown as Json, v.defaulted.path), v.defaulted.value)
            )
              wrong.push(`${constraintId(v.constraint)}: accepted without its default`);
          } catch (e) {
            if (v.defaulted) wrong.push(`${constraintId(v.constraint)}: has a default, but was refused`);
            const causes = causesOf(e);
            if (!causes.some((c) => c.field === v.field))
              wrong.push(
                `${constraintId(v.constraint)}: no cause names ${v.field}: ${JSON.stringify(causes)}`,
              );
          }
        });
        assert.deepEqual(wrong, []);
        assert.ok(violations.size > 0);
      });

      it("refuses a broken status enum, bound, pattern, list size or required field, naming the field", async () => {
        // Status is written through its subresource, by the operator: the same checks apply there.
        const live = await create(baseObject());
        const statusPath = client.resourcePath(crd().type, ns, live.metadata.name, "status");
        const putStatus = async (status: Json) => {
          const current = await client.get(crd().type, live.metadata.name!, ns);
          return client.request({ method: "PUT", path: statusPath, body: { ...current, status } });
        };
        const full = { status: part(".status") } as JsonObject;
        try {
          await putStatus(full["status"]!);
        } catch (e) {
          assert.fail(`a valid ${k.kind} status was refused: ${(e as Error).message}`);
        }
        const violations = violationsOf(crd().schema, full, "status");
        const untried = sectionConstraints(crd().schema, "status")
          .map(constraintId)
          .filter((id) => !violations.has(id));
        assert.deepEqual(untried, [], "status constraints the full status does not reach");
        const wrong: string[] = [];
        for (const v of violations.values()) {
          const broken = structuredClone(full);
          v.apply(broken);
          try {
            await putStatus(broken["status"]!);
            if (!v.defaulted) wrong.push(`${constraintId(v.constraint)}: accepted`);
          } catch (e) {
            const causes = causesOf(e);
            if (!causes.some((c) => c.field === v.field))
              wrong.push(
                `${constraintId(v.constraint)}: no cause names ${v.field}: ${JSON.stringify(causes)}`,
              );
          }
        }
        assert.deepEqual(wrong, []);
      });

      it("enforces every CEL rule: the broken object is refused naming the field, its fix is accepted", async () => {
        const missing = crd()
          .rules.map((r) => r.message)
          .filter((m) => !k.cel.some((c) => c.message === m));
        assert.deepEqual(missing, [], "CEL rules without a case here");
        const stale = k.cel
          .filter((c) => !crd().rules.some((r) => r.message === c.message))
          .map((c) => c.message);
        assert.deepEqual(stale, [], "cases for rules the CRD no longer has");

        for (const c of k.cel) {
          const broken = baseObject();
          let live: KubeObject | undefined;
          if (c.update) {
            live = await create(broken);
            broken["metadata"] = { name: live.metadata.name!, namespace: ns };
          }
          c.bad(broken, part);
          const write = (o: JsonObject) =>
            live
              ? client.apply(crd().type, o as unknown as KubeObject, {
                  fieldManager: "crd-test",
                  force: true,
                })
              : create(o);
          const refused = await write(broken).then(
            () => undefined,
            (e: unknown) => causesOf(e),
          );
          assert.ok(refused, `${c.message}: the broken object was accepted`);
          assert.ok(
            refused.some((x) => x.field === c.field && x.message?.includes(c.message)),
            `${c.message}: expected a cause naming ${c.field}, got ${JSON.stringify(refused)}`,
          );
          if (c.good) {
            const fixed = baseObject();
            if (live) fixed["metadata"] = { name: live.metadata.name!, namespace: ns };
            c.good(fixed);
            await write(fixed);
          }
        }
      });
    });
  }
});
