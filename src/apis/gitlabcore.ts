/** GitLabCore (`apps.gitlab.com/v2alpha1`): one GitLab instance rendered from the GitLab chart. */
import { type Static, Type } from "@sinclair/typebox";
import {
  Conditions,
  cel,
  DataKey,
  FreeFormObject,
  KindSchema,
  type KubeOptions,
  ObjectName,
  ObservedGeneration,
  SecretKeySelector,
  StringEnum,
} from "./common.js";
import type { KindDefinition } from "./crd.js";
import {
  DefaultValuesKey,
  Editions,
  GitLabConfigSourceLabel,
  GitLabCoreApiVersion,
  GitLabCoreGroup,
  GitLabCoreKind,
  GitLabCorePhases,
  GitLabCorePlural,
  GitLabCoreVersion,
  ValuesFromKinds,
  VersionTypes,
} from "./gitlabcore-names.js";

export * from "./gitlabcore-names.js";

export const HOSTNAME_PATTERN = "^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\\.)+[a-z]([-a-z0-9]{0,61}[a-z0-9])?$";

const SEMVER_PATTERN = "^v?[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$";

export const VersionRefSchema = Type.Object(
  {
    kind: Type.Optional(
      Type.Literal("ConfigMap", {
        description: "Only ConfigMaps can hold the version.",
        default: "ConfigMap",
      }),
    ),
    name: ObjectName("ConfigMap in the namespace of this GitLabCore."),
    key: Type.String({ description: "Key holding the chart version.", minLength: 1, maxLength: 253 }),
  },
  { description: "Reads the chart version from a ConfigMap, so someone else can own the version." },
);

export const ValuesFromSchema = Type.Object(
  {
    kind: StringEnum(ValuesFromKinds, { description: "ConfigMap or Secret." }),
    name: ObjectName(
      `ConfigMap or Secret in the namespace of this GitLabCore, labelled ${GitLabConfigSourceLabel}: "true".`,
    ),
    valuesKey: Type.Optional(
      Type.String({
        description: "Key holding a YAML map of chart values.",
        default: DefaultValuesKey,
        minLength: 1,
        maxLength: 253,
        pattern: "^[-._a-zA-Z0-9]+$",
      }),
    ),
    optional: Type.Optional(
      Type.Boolean({
        description: "A missing object or key adds nothing instead of stopping the render.",
        default: false,
      }),
    ),
  },
  { description: "Chart values read from a labelled ConfigMap or Secret." },
);

/**
 * The union rules of spec.version as CEL for the API server, each with a TypeScript twin so offline
 * `validate` and the reconciler enforce exactly what the definition does (a unit test holds every
 * rule's twin to its CEL on the same inputs through the real API server's answers).
 */
export interface VersionShape {
  type?: unknown;
  version?: unknown;
  versionRef?: unknown;
  minor?: unknown;
  major?: unknown;
}
export const VersionUnionRules: { rule: string; message: string; holds: (v: VersionShape) => boolean }[] = [
  {
    rule: "self.type != 'Static' || has(self.version) != has(self.versionRef)",
    message: "type Static takes exactly one of version and versionRef",
    holds: (v) => v.type !== "Static" || (v.version !== undefined) !== (v.versionRef !== undefined),
  },
  {
    rule: "self.type == 'Static' || (!has(self.version) && !has(self.versionRef))",
    message: "version and versionRef belong to type Static only",
    holds: (v) => v.type === "Static" || (v.version === undefined && v.versionRef === undefined),
  },
  {
    rule: "self.type != 'Patch' || has(self.minor)",
    message: "type Patch needs minor",
    holds: (v) => v.type !== "Patch" || v.minor !== undefined,
  },
  {
    rule: "self.type == 'Patch' || !has(self.minor)",
    message: "minor belongs to type Patch only",
    holds: (v) => v.type === "Patch" || v.minor === undefined,
  },
  {
    rule: "self.type in ['Latest', 'Previous', 'OldestSupported'] || !has(self.major)",
    message: "major belongs to types Latest, Previous and OldestSupported only",
    holds: (v) =>
      v.type === "Latest" || v.type === "Previous" || v.type === "OldestSupported" || v.major === undefined,
  },
];

// Each type takes its own fields and no others. The rules read the type once and test presence,
// which keeps every rule cheap and the messages specific.
export const GitLabVersionSchema = Type.Object(
  {
    type: StringEnum(VersionTypes, {
      description:
        "Static pins a chart version; Patch follows the newest patch of a minor; Latest, Previous and OldestSupported follow the chart repository.",
    }),
    version: Type.Optional(
      Type.String({ description: "Chart version, for type Static.", maxLength: 64, pattern: SEMVER_PATTERN }),
    ),
    versionRef: Type.Optional(VersionRefSchema),
    minor: Type.Optional(
      Type.String({
        description: "Chart minor such as 9.3, for type Patch.",
        maxLength: 32,
        pattern: "^[0-9]+\\.[0-9]+$",
      }),
    ),
    major: Type.Optional(
      Type.Integer({
        description:
          "Chart major for Latest, Previous and OldestSupported. Unset: installed within the major the count lands on, then kept on the major the instance runs; a major upgrade happens only when this is set or raised.",
        minimum: 0,
        maximum: 1000,
      }),
    ),
  },
  {
    description: "Which chart version to run; a union discriminated by type. Unset: type Latest.",
    "x-kubernetes-validations": VersionUnionRules.map((r) => cel(r.rule, r.message)),
  } satisfies KubeOptions,
);
export type GitLabVersion = Static<typeof GitLabVersionSchema>;

const Host = (description: string) =>
  Type.String({
    description,
    minLength: 1,
    maxLength: 253,
    pattern: "^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?$",
  });

const ExternalService = (what: string) =>
  Type.Object(
    {
      host: Host(`Host name or address of the ${what} server.`),
      passwordSecretRef: SecretKeySelector(`Secret key holding the ${what} password.`),
    },
    { description: `The ${what} server this instance uses; the chart bundles none.` },
  );

export const IssuerRefSchema = Type.Object(
  {
    name: ObjectName("Name of the issuer."),
    // Not an enum: issuers outside cert-manager.io (a group below) have kinds of their own.
    kind: Type.Optional(
      Type.String({
        description:
          "Kind of the issuer: Issuer or ClusterIssuer in cert-manager.io, or an external issuer's kind.",
        default: "Issuer",
        maxLength: 63,
        pattern: "^[A-Z][A-Za-z0-9]*$",
      }),
    ),
    group: Type.Optional(
      Type.String({ description: "API group of the issuer.", default: "cert-manager.io", maxLength: 253 }),
    ),
  },
  { description: "cert-manager issuer that signs the Gateway's certificate." },
);

const CertManager = () =>
  Type.Object(
    { issuerRef: IssuerRefSchema },
    { description: "Annotates the Gateway so cert-manager issues its certificate." },
  );

const ConfigureEnvoy = () =>
  Type.Boolean({
    description:
      "Add the chart's Envoy Gateway extensions for a class or Gateway the operator does not provision.",
    default: false,
  });

export const ControllerNameImmutableMessage = "envoyGatewayController.controllerName cannot be changed";

export const NetworkingModes = ["envoyGatewayController", "gatewayClass", "gateway"] as const;
export const NetworkingOneModeMessage = "set at most one of envoyGatewayController, gatewayClass and gateway";

export const GitLabNetworkingSchema = Type.Object(
  {
    envoyGatewayController: Type.Optional(
      Type.Object(
        {
          controllerName: Type.Optional(
            Type.String({
              description:
                "controllerName of the GatewayClass the operator provisions; fixed once set, as a GatewayClass's is.",
              minLength: 1,
              maxLength: 253,
              pattern: "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+$",
              // A GatewayClass cannot change its controller: the API server refuses the change here
              // rather than letting the render fail against the existing class.
              "x-kubernetes-validations": [cel("self == oldSelf", ControllerNameImmutableMessage)],
            } satisfies KubeOptions),
          ),
          certManager: Type.Optional(CertManager()),
        },
        { description: "The chart renders a GatewayClass for Envoy Gateway and a Gateway using it." },
      ),
    ),
    gatewayClass: Type.Optional(
      Type.Object(
        {
          name: ObjectName("Existing GatewayClass the rendered Gateway uses."),
          configureEnvoy: Type.Optional(ConfigureEnvoy()),
          certManager: Type.Optional(CertManager()),
        },
        { description: "The chart renders a Gateway of an existing GatewayClass." },
      ),
    ),
    gateway: Type.Optional(
      Type.Object(
        {
          name: ObjectName("Existing Gateway the routes attach to."),
          namespace: Type.Optional(
            ObjectName("Namespace of the Gateway; this object's namespace when unset."),
          ),
          configureEnvoy: Type.Optional(ConfigureEnvoy()),
        },
        { description: "Routes attach to an existing Gateway; the chart renders no Gateway." },
      ),
    ),
  },
  {
    description: "Gateway API mode. Unset turns the Gateway API off and leaves networking to chart values.",
    "x-kubernetes-validations": [
      cel(
        "(has(self.envoyGatewayController) ? 1 : 0) + (has(self.gatewayClass) ? 1 : 0) + (has(self.gateway) ? 1 : 0) <= 1",
        NetworkingOneModeMessage,
      ),
    ],
  } satisfies KubeOptions,
);

export const GitLabOpenBaoSchema = Type.Object(
  {
    postgresql: Type.Object(
      {
        host: Host("Host name or address of OpenBao's PostgreSQL server."),
        port: Type.Optional(
          Type.Integer({ description: "PostgreSQL port.", default: 5432, minimum: 1, maximum: 65535 }),
        ),
        database: Type.Optional(
          Type.String({ description: "Database name.", default: "openbao", minLength: 1, maxLength: 63 }),
        ),
        username: Type.Optional(
          Type.String({ description: "Database user.", default: "openbao", minLength: 1, maxLength: 63 }),
        ),
        passwordSecretRef: SecretKeySelector(
          "Secret key holding the password; OpenBao never shares GitLab's.",
        ),
      },
      { description: "OpenBao's own PostgreSQL connection." },
    ),
    serviceAccount: Type.Optional(
      Type.Object(
        {
          name: ObjectName(
            "ServiceAccount the OpenBao pod runs as; an administrator creates it and its Role.",
          ),
        },
        { description: "Identity of the OpenBao pod." },
      ),
    ),
  },
  { description: "Backs the GitLab Secret Manager with the bundled OpenBao; setting it turns both on." },
);

export const CustomCAOneSourceMessage = "set exactly one of secret and configMap";

export const CustomCASchema = Type.Object(
  {
    secret: Type.Optional(ObjectName("Secret in the namespace of this GitLabCore holding CA certificates.")),
    configMap: Type.Optional(
      ObjectName("ConfigMap in the namespace of this GitLabCore holding CA certificates."),
    ),
    keys: Type.Optional(
      Type.Array(DataKey("Key holding PEM certificates."), {
        description: "Keys to read; every key of the object when unset.",
        maxItems: 64,
      }),
    ),
  },
  {
    description: "Certificate authorities GitLab trusts, from one Secret or one ConfigMap.",
    "x-kubernetes-validations": [cel("has(self.secret) != has(self.configMap)", CustomCAOneSourceMessage)],
  } satisfies KubeOptions,
);
export type CustomCA = Static<typeof CustomCASchema>;

export const ClickHouseUrlMessage = "url must be an http:// or https:// URL";
/** The TypeScript twin of the url rule below, for offline validate. */
export const clickHouseUrlHolds = (url: string): boolean => /^https?:\/\/[^/?#\s]+/.test(url);

export const GitLabClickHouseSchema = Type.Object(
  {
    url: Type.String({
      description: "HTTP(S) endpoint of the ClickHouse server, such as https://clickhouse.example.com:8443.",
      minLength: 1,
      maxLength: 2048,
      "x-kubernetes-validations": [cel("self.matches('^https?://[^/?#\\\\s]+')", ClickHouseUrlMessage)],
    } satisfies KubeOptions),
    database: Type.String({ description: "Database name.", minLength: 1, maxLength: 255 }),
    user: Type.String({ description: "Database user.", minLength: 1, maxLength: 255 }),
    passwordSecretRef: SecretKeySelector("Secret key holding the ClickHouse password."),
  },
  { description: "External ClickHouse database; setting it turns GitLab's ClickHouse integration on." },
);

export const HostOrDomainMessage = "set exactly one of hostname and domain";
export const OpenBaoOneNameMessage = "set spec.components.openbao or spec.openbao, not both";

/** The spec-level CEL rules, each with its TypeScript twin for offline validate. */
export const SpecRules: {
  rule: string;
  message: string;
  field: string;
  holds: (s: Record<string, unknown>) => boolean;
}[] = [
  {
    rule: "has(self.hostname) != has(self.domain)",
    message: HostOrDomainMessage,
    field: "spec.hostname",
    holds: (s) => (s["hostname"] !== undefined) !== (s["domain"] !== undefined),
  },
  {
    rule: "!has(self.openbao) || !has(self.components) || !has(self.components.openbao)",
    message: OpenBaoOneNameMessage,
    field: "spec.components.openbao",
    holds: (s) => {
      const c = s["components"];
      const nested =
        typeof c === "object" && c !== null && (c as Record<string, unknown>)["openbao"] !== undefined;
      return s["openbao"] === undefined || !nested;
    },
  },
];

export const GitLabCoreSpecSchema = Type.Object(
  {
    version: Type.Optional(GitLabVersionSchema),
    hostname: Type.Optional(
      Type.String({
        description:
          "Fully qualified host name of the instance; its domain also names the registry and KAS hosts. Exactly one of hostname and domain.",
        minLength: 1,
        maxLength: 253,
        // Lower-case labels of at most 63 characters, at least two, the last starting with a letter:
        // no IP address, trailing dot or single label. A public suffix is refused by the reconciler.
        pattern: HOSTNAME_PATTERN,
      }),
    ),
    domain: Type.Optional(
      Type.String({
        description:
          "Domain every component is served under: GitLab at gitlab.<domain>, the registry at registry.<domain>. Exactly one of hostname and domain.",
        minLength: 1,
        maxLength: 246,
        pattern: HOSTNAME_PATTERN,
      }),
    ),
    edition: Type.Optional(
      StringEnum(Editions, { description: "Image repository every component pulls from.", default: "ee" }),
    ),
    license: Type.Optional(
      Type.Object(
        { secretRef: SecretKeySelector("Secret key holding the license.") },
        { description: "GitLab license for the ee edition." },
      ),
    ),
    postgresql: Type.Optional(ExternalService("PostgreSQL")),
    redis: Type.Optional(ExternalService("Redis (or Valkey)")),
    objectStorage: Type.Optional(
      Type.Object(
        {
          connectionSecretRef: SecretKeySelector(
            "Secret key holding the object storage connection in the chart's format; passed through unread.",
          ),
        },
        { description: "Consolidated object storage; naming the Secret turns it on." },
      ),
    ),
    openbao: Type.Optional(GitLabOpenBaoSchema),
    components: Type.Optional(
      Type.Object(
        { openbao: Type.Optional(GitLabOpenBaoSchema) },
        { description: "Optional components; components.openbao is the newer name of spec.openbao." },
      ),
    ),
    clickhouse: Type.Optional(GitLabClickHouseSchema),
    certificates: Type.Optional(
      Type.Object(
        {
          customCAs: Type.Optional(
            Type.Array(CustomCASchema, {
              description:
                "Sets the chart's global.certificates.customCAs; the same key in spec.chart.values replaces the list.",
              maxItems: 32,
            }),
          ),
        },
        { description: "Certificate authorities of the administrator's own." },
      ),
    ),
    networking: Type.Optional(GitLabNetworkingSchema),
    chart: Type.Optional(
      Type.Object(
        {
          valuesFrom: Type.Optional(
            Type.Array(ValuesFromSchema, {
              description:
                "Values from ConfigMaps and Secrets, merged in order over the derived ones and under spec.chart.values.",
              maxItems: 32,
            }),
          ),
          values: Type.Optional(
            FreeFormObject("Chart values merged over the derived ones; the operator overrides still win."),
          ),
        },
        { description: "Escape hatch into the chart." },
      ),
    ),
    upgrade: Type.Optional(
      Type.Object(
        {
          skipBatchedMigrationCheck: Type.Optional(
            Type.Boolean({
              description:
                "Advance an upgrade step without waiting for batched background migrations. Development only.",
              default: false,
            }),
          ),
        },
        { description: "How upgrades step through minors." },
      ),
    ),
  },
  {
    description: "The GitLab instance to run.",
    "x-kubernetes-validations": SpecRules.map((r) => cel(r.rule, r.message)),
  } satisfies KubeOptions,
);
export type GitLabCoreSpec = Static<typeof GitLabCoreSpecSchema>;

const VersionString = (description: string) => Type.String({ description, maxLength: 64 });

export const GitLabCoreStatusSchema = Type.Object(
  {
    phase: Type.Optional(StringEnum(GitLabCorePhases, { description: "Summary of where the instance is." })),
    version: Type.Optional(VersionString("Chart version last applied.")),
    gitlabVersion: Type.Optional(VersionString("GitLab version the applied chart deploys.")),
    targetVersion: Type.Optional(
      VersionString(
        "Chart version the instance upgrades to: kept until that upgrade completes, even when a newer one is released meanwhile (except for type Static).",
      ),
    ),
    availableVersion: Type.Optional(
      VersionString(
        "Chart version spec.version selects now; becomes the target once a running upgrade completes.",
      ),
    ),
    hooksVersion: Type.Optional(VersionString("Chart version whose pre-install hooks last completed.")),
    hookRun: Type.Optional(
      Type.Object(
        {
          id: Type.String({ maxLength: 63, description: "Stamped on every hook object this run creates." }),
          event: Type.String({ maxLength: 32, description: "The Helm hook event that runs." }),
          chartVersion: VersionString("Chart version whose hooks run."),
          generation: Type.Integer({ minimum: 0, description: "The generation the run is for." }),
          succeeded: Type.Optional(
            Type.Boolean({
              description:
                "Every hook of the run succeeded, written before the hook-succeeded deletions start: a restarted operator finishes those deletions and creates no hook of this run again.",
            }),
          ),
        },
        {
          description:
            "The hook run in progress, so a later pass (or a restarted operator) waits for the hooks it created instead of creating them again.",
        },
      ),
    ),
    clickHouseEnabled: Type.Optional(
      Type.Boolean({
        description: "Whether the last rendered values turn GitLab's ClickHouse integration on.",
      }),
    ),
    renderedKinds: Type.Optional(
      Type.Array(Type.String({ maxLength: 317 }), {
        description: "Kinds the release rendered, as <apiVersion>/<Kind>; prune and deletion list these.",
        maxItems: 256,
      }),
    ),
    conditions: Type.Optional(Conditions()),
    observedGeneration: Type.Optional(ObservedGeneration()),
  },
  { description: "What was applied, which may trail the spec during a multi-minor upgrade." },
);
export type GitLabCoreStatus = Static<typeof GitLabCoreStatusSchema>;

export const GitLabCoreSchema = KindSchema(
  GitLabCoreApiVersion,
  GitLabCoreKind,
  GitLabCoreSpecSchema,
  GitLabCoreStatusSchema,
  "GitLabCore runs one GitLab instance from the GitLab chart: render, hooks, server-side apply and prune.",
);
export type GitLabCore = Static<typeof GitLabCoreSchema>;

export const GitLabCoreDefinition: KindDefinition = {
  group: GitLabCoreGroup,
  version: GitLabCoreVersion,
  kind: GitLabCoreKind,
  plural: GitLabCorePlural,
  scope: "Namespaced",
  // `kubectl get glc`; the openbao kinds keep bao/baoc and obrestore.
  shortNames: ["glc"],
  categories: ["gitlab"],
  schema: GitLabCoreSchema,
  printerColumns: [
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Chart", type: "string", jsonPath: ".status.version" },
    { name: "GitLab", type: "string", jsonPath: ".status.gitlabVersion" },
    { name: "Available", type: "string", jsonPath: '.status.conditions[?(@.type=="Available")].status' },
    { name: "Hostname", type: "string", jsonPath: ".spec.hostname", priority: 1 },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};
