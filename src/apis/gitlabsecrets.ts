/**
 * GitLabSecrets (`apps.gitlab.com/v2alpha1`): what GitLab's chart renders instead of its
 * shared-secrets hook Job when `shared-secrets.provider` is `controller`. It declares the Secrets a
 * release needs and how each key is generated; the gitlab target fills in what is missing.
 */
import { type Static, Type } from "@sinclair/typebox";
import {
  Conditions,
  cel,
  DataKey,
  KindSchema,
  type KubeOptions,
  ObservedGeneration,
  StringEnum,
} from "./common.js";
import type { KindDefinition } from "./crd.js";
import { GitLabCoreApiVersion } from "./gitlabcore-names.js";
import {
  BytesEncodings,
  CertificateAlgorithms,
  GeneratorTypes,
  GitLabSecretsGroup,
  GitLabSecretsKind,
  GitLabSecretsPlural,
  GitLabSecretsPolicies,
  GitLabSecretsVersion,
  RailsFieldShapes,
  RandomCharsets,
  RandomEncodings,
  RandomWraps,
} from "./gitlabsecrets-names.js";

export * from "./gitlabsecrets-names.js";

// Bounds keep the CEL cost estimate small; the chart's largest values are far inside them.
const Count = (description: string, minimum: number, maximum: number) =>
  Type.Integer({ description, minimum, maximum });
const Text = (description: string, maxLength = 253) => Type.String({ description, maxLength });

/** Every encoding a generator may name: random takes none|base64|base64-nowrap, bytes raw|base64. */
const Encodings = [...new Set([...RandomEncodings, ...BytesEncodings])] as const;

/** The fields each generator type must carry, as the chart's manifest declares them. */
export const GeneratorRequiredFields: Readonly<Record<string, readonly string[]>> = {
  random: ["key", "charset", "length"],
  bytes: ["key", "length", "encoding"],
  static: ["key", "value"],
  rsa: ["key", "bits"],
  x509: ["commonName", "bits", "days", "certKey", "keyKey"],
  sshHostKeys: [],
  railsSecrets: ["key", "env", "fields"],
};

const requiredRules = Object.entries(GeneratorRequiredFields)
  .filter(([, fields]) => fields.length > 0)
  .map(([type, fields]) =>
    cel(
      `self.type != '${type}' || (${fields.map((f) => `has(self.${f})`).join(" && ")})`,
      `a ${type} generator needs ${fields.join(", ")}`,
    ),
  );

export const RailsFieldSchema = Type.Object(
  {
    path: Text("Field of the Rails environment's document, e.g. db_key_base."),
    shape: StringEnum(RailsFieldShapes, {
      description: "scalar, pem (an RSA key of bits) or list (one element).",
    }),
    charset: Type.Optional(
      StringEnum(RandomCharsets, { description: "Alphabet of a scalar or list value." }),
    ),
    length: Type.Optional(Count("Characters of a scalar or list value.", 1, 65536)),
    bits: Type.Optional(Count("RSA key size of a pem value.", 1024, 16384)),
  },
  { description: "One generated field of secrets.yml." },
);

export const GeneratorSchema = Type.Object(
  {
    type: StringEnum(GeneratorTypes, { description: "How the value is produced." }),
    key: Type.Optional(DataKey("Key of the Secret the value is stored under.")),
    charset: Type.Optional(
      StringEnum(RandomCharsets, {
        description: "random: alphanumeric (a-zA-Z0-9), hex (a-f0-9) or lowerAlphanumeric (a-z0-9).",
      }),
    ),
    length: Type.Optional(Count("random: characters before encoding; bytes: number of bytes.", 1, 65536)),
    encoding: Type.Optional(
      StringEnum(Encodings, {
        description:
          "random: none (default), base64 (wrapped at 76 columns, trailing newline) or base64-nowrap; bytes: raw or base64.",
      }),
    ),
    wrap: Type.Optional(
      StringEnum(RandomWraps, {
        description: 'random: none (default) or jsonArray (stored as ["<value>"]).',
      }),
    ),
    value: Type.Optional(
      Type.String({ description: "static: the value, possibly empty.", maxLength: 65536 }),
    ),
    bits: Type.Optional(Count("rsa, x509: RSA key size.", 1024, 16384)),
    days: Type.Optional(Count("x509: validity in days.", 1, 36500)),
    commonName: Type.Optional(Text("x509: subject common name.")),
    certKey: Type.Optional(DataKey("x509: key of the certificate.")),
    keyKey: Type.Optional(DataKey("x509: key of the private key.")),
    env: Type.Optional(Text("railsSecrets: the Rails environment, the document's top-level key.")),
    fields: Type.Optional(
      Type.Array(RailsFieldSchema, { description: "railsSecrets: the fields to generate.", maxItems: 64 }),
    ),
  },
  {
    description:
      "One generator: a key (or, for x509, sshHostKeys and railsSecrets, a set of keys) of the Secret.",
    "x-kubernetes-validations": [
      ...requiredRules,
      cel(
        "self.type != 'random' || !has(self.encoding) || self.encoding != 'raw'",
        "a random generator's encoding is none, base64 or base64-nowrap",
      ),
      cel(
        "self.type != 'bytes' || !has(self.encoding) || self.encoding in ['raw', 'base64']",
        "a bytes generator's encoding is raw or base64",
      ),
    ],
  } satisfies KubeOptions,
);
export type Generator = Static<typeof GeneratorSchema>;

export const SecretEntrySchema = Type.Object(
  {
    name: Type.String({
      description: "Name of the Secret, in this object's namespace.",
      minLength: 1,
      maxLength: 253,
      pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    }),
    type: Type.Optional(
      Text("Type of a Secret created here (default Opaque); an existing Secret keeps its own."),
    ),
    generators: Type.Array(GeneratorSchema, {
      description: "How each key is produced.",
      minItems: 1,
      maxItems: 32,
    }),
  },
  { description: "One Secret and the generators of its keys." },
);
export type SecretEntry = Static<typeof SecretEntrySchema>;

export const CertificateSchema = Type.Object(
  {
    authority: Type.Object(
      {
        commonName: Type.Optional(Text("Subject common name of the authority.")),
        organization: Type.Optional(Text("Subject organization.")),
        organizationalUnit: Type.Optional(Text("Subject organizational unit.")),
        algorithm: Type.Optional(
          StringEnum(CertificateAlgorithms, { description: "Key algorithm: rsa or ecdsa." }),
        ),
        keySize: Type.Optional(
          Type.Integer({
            description: "Key size; an RSA size must be even.",
            minimum: 256,
            maximum: 16384,
          }),
        ),
        expiry: Type.Optional(Text("Validity of the authority, e.g. 3650d.", 32)),
      },
      {
        description: "The self-signed certificate authority.",
        "x-kubernetes-validations": [
          cel(
            "!has(self.keySize) || (has(self.algorithm) && self.algorithm != 'rsa') || self.keySize % 2 == 0",
            "an RSA keySize must be even",
          ),
        ],
      } satisfies KubeOptions,
    ),
    domain: Text("Domain of the wildcard certificate."),
    caDays: Type.Optional(Count("Validity of the authority in days.", 1, 36500)),
    certDays: Type.Optional(Count("Validity of the wildcard certificate in days.", 1, 36500)),
    tlsSecret: Text("kubernetes.io/tls Secret of the wildcard certificate and its key."),
    caSecret: Text("Secret of the authority's certificate."),
    caKey: DataKey("Key of the authority's certificate in caSecret."),
    chainSecret: Text("Secret of the authority and wildcard certificates concatenated."),
    chainKey: DataKey("Key of the chain in chainSecret."),
  },
  { description: "One certificate authority, its wildcard certificate, and the three Secrets they make." },
);

export const GitLabSecretsSpecSchema = Type.Object(
  {
    policy: Type.Optional(
      StringEnum(GitLabSecretsPolicies, {
        description:
          "fill-missing (the only policy, and the default): generate what is absent, never overwrite.",
      }),
    ),
    secrets: Type.Optional(
      Type.Array(SecretEntrySchema, {
        description: "The Secrets to provide.",
        maxItems: 256,
      }),
    ),
    certificates: Type.Optional(
      Type.Array(CertificateSchema, {
        description: "Self-signed certificate sets (the chart emits at most one).",
        maxItems: 4,
      }),
    ),
  },
  { description: "The Secrets a GitLab release needs and how their values are generated." },
);
export type GitLabSecretsSpec = Static<typeof GitLabSecretsSpecSchema>;

export const GitLabSecretsStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(ObservedGeneration()),
    secrets: Type.Optional(
      Type.Array(
        Type.Object({
          name: Text("Name of the Secret."),
          ready: Type.Boolean({ description: "Whether the Secret holds every declared key." }),
          readyUnits: Type.Optional(
            Type.Array(Text("A unit: ssh_host_<type>_key, or <key>#<env>.<field> of a secrets.yml."), {
              description:
                "Data-bearing units (SSH host key pairs, secrets.yml fields) that held their data; one that is later gone is reported, never generated again.",
              maxItems: 64,
            }),
          ),
        }),
        { description: "Readiness of each declared Secret.", maxItems: 256 },
      ),
    ),
    conditions: Type.Optional(Conditions()),
  },
  { description: "Whether the declared Secrets exist with every key; never a value." },
);
export type GitLabSecretsStatus = Static<typeof GitLabSecretsStatusSchema>;

export const GitLabSecretsSchema = KindSchema(
  GitLabCoreApiVersion,
  GitLabSecretsKind,
  GitLabSecretsSpecSchema,
  GitLabSecretsStatusSchema,
  "GitLabSecrets declares the Secrets a GitLab release needs; missing ones and missing keys are generated, existing values are never changed.",
);
export type GitLabSecrets = Static<typeof GitLabSecretsSchema>;

export const GitLabSecretsDefinition: KindDefinition = {
  group: GitLabSecretsGroup,
  version: GitLabSecretsVersion,
  kind: GitLabSecretsKind,
  plural: GitLabSecretsPlural,
  scope: "Namespaced",
  categories: ["gitlab"],
  schema: GitLabSecretsSchema,
  printerColumns: [
    { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: "Reason", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};
