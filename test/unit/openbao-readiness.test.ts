import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import type { Informer } from "../../src/runtime/informer.js";
import type { KubeObject } from "../../src/runtime/types.js";
import { acmeIntegration } from "../../src/targets/openbao/readiness/acme.js";
import { apiServerNetwork } from "../../src/targets/openbao/readiness/api-server.js";
import { READINESS_TYPES, readinessConditions } from "../../src/targets/openbao/readiness/assemble.js";
import { backupConfiguration } from "../../src/targets/openbao/readiness/backup.js";
import { acmeCache, auditFileStorage } from "../../src/targets/openbao/readiness/claims.js";
import { cloudUnsealIdentity } from "../../src/targets/openbao/readiness/cloud-unseal.js";
import { CONTRACTS, withinContract } from "../../src/targets/openbao/readiness/contract.js";
import type { GatewayFacts, Lookup, ReadinessFacts } from "../../src/targets/openbao/readiness/facts.js";
import { gatewayIntegration } from "../../src/targets/openbao/readiness/gateway.js";
import {
  clustersOfGateway,
  clustersOfGatewayClass,
  clustersUsingGateways,
} from "../../src/targets/openbao/readiness/gateway-watch.js";
import { userAccessBootstrap } from "../../src/targets/openbao/readiness/user-access.js";
import { secretClusters } from "../../src/targets/openbao/target.js";

// Upstream 0.5's configuration-readiness conditions, pure: each reason of each family reached from
// the spec and what the caches hold, and every result held to its condition's contract.

// biome-ignore lint/suspicious/noExplicitAny: specs are built loosely in tests
type Spec = Record<string, any>;
const cluster = (spec: Spec): OpenBaoCluster =>
  ({
    apiVersion: "openbao.org/v1alpha1",
    kind: "OpenBaoCluster",
    metadata: { name: "bao", namespace: "vault", generation: 1 },
    spec: { version: "2.4.0", replicas: 1, profile: "Development", ...spec },
  }) as unknown as OpenBaoCluster;
const obj = (name: string, rest: Spec = {}): KubeObject =>
  ({ metadata: { name, namespace: "vault", generation: 2 }, ...rest }) as KubeObject;
const pair = (r: { status: string; reason: string }) => [r.status, r.reason];
const secrets = (...names: string[]) => new Map<string, Lookup>(names.map((n) => [n, obj(n)]));

describe("openbao readiness conditions (upstream 0.5's contracts)", () => {
  it("a result outside its contract becomes Unknown/Unknown naming what was refused", () => {
    const r = withinContract("BackupConfigurationReady", {
      status: "True",
      reason: "TokenSecretMissing" as never,
      message: "x",
    });
    assert.deepEqual(pair(r), ["Unknown", "Unknown"]);
    assert.match(r.message, /True\/TokenSecretMissing/);
    assert.equal(CONTRACTS.ACMECacheReady.has("Paused"), false, "upstream never pauses ACMECacheReady");
  });

  describe("GatewayIntegrationReady", () => {
    const spec = { gateway: { enabled: true, hostname: "bao.example.test", gatewayRef: { name: "gw" } } };
    const c = cluster(spec);
    const listeners = [{ name: "https", protocol: "HTTPS", port: 443 }];
    const gw = (status: Spec = { conditions: [{ type: "Programmed", status: "True" }] }, more: Spec = {}) =>
      obj("gw", { spec: { gatewayClassName: "cls", listeners, ...more }, status });
    const cls = (conds: Spec[], features: string[] = ["HTTPRoute", "BackendTLSPolicy"]) =>
      obj("cls", {
        spec: { controllerName: "example.test/gw" },
        status: { conditions: conds, supportedFeatures: features.map((name) => ({ name })) },
      });
    const accepted = cls([{ type: "Accepted", status: "True" }]);
    const route = (conds: Spec[], parent: Spec = {}) =>
      obj("bao-httproute", {
        status: {
          parents: [
            {
              parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw", ...parent },
              controllerName: "example.test/gw",
              conditions: conds,
            },
          ],
        },
      });
    const ok = [
      { type: "Accepted", status: "True", observedGeneration: 2 },
      { type: "ResolvedRefs", status: "True", observedGeneration: 2 },
    ];
    const facts = (f: Partial<GatewayFacts>): GatewayFacts => ({
      gateway: gw(),
      gatewayClass: accepted,
      route: route(ok),
      ...f,
    });
    const cases: [string, GatewayFacts, OpenBaoCluster, string, string][] = [
      ["CRDs absent", { gateway: "not-served", route: "not-served" }, c, "False", "GatewayAPIMissing"],
      ["Gateway absent", facts({ gateway: "missing" }), c, "False", "GatewayReferenceMissing"],
      ["Gateway unreadable", facts({ gateway: "forbidden" }), c, "Unknown", "GatewayCapabilitiesUnknown"],
      [
        "no fitting listener",
        facts({
          gateway: obj("gw", { spec: { gatewayClassName: "cls", listeners: [{ protocol: "TCP" }] } }),
        }),
        c,
        "False",
        "GatewayListenerIncompatible",
      ],
      [
        "listener named and absent",
        facts({}),
        cluster({ gateway: { ...spec.gateway, listenerName: "other" } }),
        "False",
        "GatewayListenerIncompatible",
      ],
      ["class absent", facts({ gatewayClass: "missing" }), c, "False", "GatewayClassMissing"],
      ["class not accepted yet", facts({ gatewayClass: cls([]) }), c, "Unknown", "GatewayClassPending"],
      [
        "class refused",
        facts({ gatewayClass: cls([{ type: "Accepted", status: "False", reason: "InvalidParameters" }]) }),
        c,
        "False",
        "GatewayClassNotAccepted",
      ],
      [
        "version unsupported",
        facts({
          gatewayClass: cls([
            { type: "Accepted", status: "True" },
            { type: "SupportedVersion", status: "False" },
          ]),
        }),
        c,
        "False",
        "GatewayVersionUnsupported",
      ],
      [
        "features unpublished",
        facts({ gatewayClass: cls([{ type: "Accepted", status: "True" }], []) }),
        c,
        "Unknown",
        "GatewayCapabilitiesUnknown",
      ],
      [
        "BackendTLSPolicy unsupported",
        facts({ gatewayClass: cls([{ type: "Accepted", status: "True" }], ["HTTPRoute"]) }),
        c,
        "False",
        "GatewayFeatureUnsupported",
      ],
      ["not programmed yet", facts({ gateway: gw({}) }), c, "Unknown", "GatewayProgrammingPending"],
      [
        "not programmed",
        facts({ gateway: gw({ conditions: [{ type: "Programmed", status: "False", reason: "Invalid" }] }) }),
        c,
        "False",
        "GatewayNotProgrammed",
      ],
      ["route absent", facts({ route: "missing" }), c, "Unknown", "GatewayRoutePending"],
      [
        "route without our parent",
        facts({ route: route(ok, { name: "other" }) }),
        c,
        "Unknown",
        "GatewayRoutePending",
      ],
      [
        "route refused",
        facts({ route: route([{ type: "Accepted", status: "False", observedGeneration: 2 }]) }),
        c,
        "False",
        "GatewayRouteNotAccepted",
      ],
      [
        "route references unresolved",
        facts({
          route: route([
            ok[0],
            { type: "ResolvedRefs", status: "False", reason: "BackendNotFound", observedGeneration: 2 },
          ]),
        }),
        c,
        "False",
        "GatewayRouteReferencesUnresolved",
      ],
      [
        "route status of an older generation",
        facts({ route: route(ok.map((x) => ({ ...x, observedGeneration: 1 }))) }),
        c,
        "Unknown",
        "GatewayRoutePending",
      ],
      ["everything ready", facts({}), c, "True", "GatewayIntegrationReady"],
      [
        "TLS off needs no BackendTLSPolicy",
        facts({ gatewayClass: cls([{ type: "Accepted", status: "True" }], ["HTTPRoute"]) }),
        cluster({ ...spec, tls: { enabled: false } }),
        "True",
        "GatewayIntegrationReady",
      ],
    ];
    for (const [name, f, cl, status, reason] of cases)
      it(`${name}: ${status}/${reason}`, () => {
        const r = gatewayIntegration(cl, f);
        assert.deepEqual(pair(r), [status, reason], r.message);
        assert.deepEqual(pair(withinContract("GatewayIntegrationReady", r)), [status, reason]);
      });
    it("a spec without a Gateway name says GatewayReferenceMissing", () => {
      const r = gatewayIntegration(
        cluster({ gateway: { ...spec.gateway, gatewayRef: { name: "" } } }),
        facts({}),
      );
      assert.deepEqual(pair(r), ["False", "GatewayReferenceMissing"]);
    });
  });

  describe("BackupConfigurationReady", () => {
    const backup = (b: Spec, more: Spec = {}) =>
      cluster({ backup: { schedule: "0 * * * *", target: { provider: "s3", bucket: "b" }, ...b }, ...more });
    const cases: [string, OpenBaoCluster, ReadonlyMap<string, Lookup>, string, string][] = [
      [
        "Hardened without egress rules",
        backup({ jwtAuthRole: "backup" }, { profile: "Hardened" }),
        secrets(),
        "False",
        "NetworkEgressRulesRequired",
      ],
      ["no way to log in", backup({}), secrets(), "False", "AuthenticationRequired"],
      [
        "token Secret absent",
        backup({ tokenSecretRef: { name: "tok" } }),
        secrets(),
        "False",
        "TokenSecretMissing",
      ],
      [
        "store credentials absent",
        backup({
          tokenSecretRef: { name: "tok" },
          target: { provider: "s3", credentialsSecretRef: { name: "cred" } },
        }),
        secrets("tok"),
        "False",
        "CredentialsSecretMissing",
      ],
      [
        "credentials Secret present",
        backup({
          tokenSecretRef: { name: "tok" },
          target: { provider: "s3", credentialsSecretRef: { name: "cred" } },
        }),
        secrets("tok", "cred"),
        "True",
        "Ready",
      ],
      [
        "roleArn",
        backup({ jwtAuthRole: "backup", target: { provider: "s3", roleArn: "arn:aws:iam::1:role/x" } }),
        secrets(),
        "True",
        "WorkloadIdentityConfigured",
      ],
      [
        "selfInit.oidc's role, ambient store identity",
        backup({}, { selfInit: { enabled: true, oidc: { enabled: true } } }),
        secrets(),
        "True",
        "AmbientIdentityAssumed",
      ],
    ];
    for (const [name, c, s, status, reason] of cases)
      it(`${name}: ${status}/${reason}`, () => {
        const r = backupConfiguration(c, s);
        assert.deepEqual(pair(r), [status, reason], r.message);
      });
    it("a token Secret it may not read is Unknown", () => {
      const r = backupConfiguration(
        backup({ tokenSecretRef: { name: "tok" } }),
        new Map([["tok", "forbidden"]]),
      );
      assert.deepEqual(pair(r), ["Unknown", "Unknown"]);
    });
  });

  describe("AuditFileStorageReady and ACMECacheReady", () => {
    const pvc = (modes: string[], phase: string) =>
      obj("c", { spec: { accessModes: modes }, status: { phase } });
    const audit = cluster({ auditFileStorage: { mode: "ExistingPVC", existingClaimName: "audit" } });
    const mounted = (claimName: string, subPathExpr = "$(BAO_K8S_POD_NAME)") =>
      obj("bao", {
        spec: {
          template: {
            spec: {
              volumes: [{ name: "audit-storage", persistentVolumeClaim: { claimName } }],
              containers: [
                {
                  name: "openbao",
                  volumeMounts: [{ name: "audit-storage", mountPath: "/openbao/audit", subPathExpr }],
                },
              ],
            },
          },
        },
      });

    it("missing, not ReadWriteMany, not Bound, not mounted, ready", () => {
      const claims = (l: Lookup) => new Map<string, Lookup>([["audit", l]]);
      assert.deepEqual(pair(auditFileStorage(audit, claims("missing"), [])), [
        "False",
        "AuditFileStorageMissing",
      ]);
      assert.deepEqual(pair(auditFileStorage(audit, claims(pvc(["ReadWriteOnce"], "Bound")), [])), [
        "False",
        "AuditFileStorageInvalidAccessMode",
      ]);
      assert.deepEqual(pair(auditFileStorage(audit, claims(pvc(["ReadWriteMany"], "Pending")), [])), [
        "False",
        "AuditFileStoragePending",
      ]);
      const bound = claims(pvc(["ReadWriteMany"], "Bound"));
      assert.deepEqual(pair(auditFileStorage(audit, bound, [mounted("other")])), [
        "False",
        "AuditFileStorageStatefulSetRecreateRequired",
      ]);
      assert.deepEqual(pair(auditFileStorage(audit, bound, [mounted("audit", "")])), [
        "False",
        "AuditFileStorageStatefulSetRecreateRequired",
      ]);
      const r = auditFileStorage(audit, bound, [mounted("audit")]);
      assert.deepEqual(pair(r), ["True", "AuditFileStorageReady"], r.message);
      assert.deepEqual(
        pair(auditFileStorage(cluster({ auditFileStorage: { mode: "ExistingPVC" } }), bound, [])),
        ["False", "AuditFileStorageMissing"],
      );
    });
    it("the ACME cache: not configured with two pods, then missing, RWO, pending, ready", () => {
      const acme = (more: Spec) =>
        cluster({
          replicas: 3,
          tls: { enabled: true, mode: "ACME", acme: { directoryURL: "https://ca", ...more } },
        });
      assert.deepEqual(pair(acmeCache(acme({}), new Map())), ["False", "ACMECacheNotConfigured"]);
      const c = acme({ sharedCache: { mode: "ExistingPVC", existingClaimName: "cache" } });
      const claims = (l: Lookup) => new Map<string, Lookup>([["cache", l]]);
      assert.deepEqual(pair(acmeCache(c, claims("missing"))), ["False", "ACMECacheMissing"]);
      assert.deepEqual(pair(acmeCache(c, claims(pvc(["ReadWriteOnce"], "Bound")))), [
        "False",
        "ACMECacheInvalidAccessMode",
      ]);
      assert.deepEqual(pair(acmeCache(c, claims(pvc(["ReadWriteMany"], "Pending")))), [
        "False",
        "ACMECachePending",
      ]);
      assert.deepEqual(pair(acmeCache(c, claims(pvc(["ReadWriteMany"], "Bound")))), [
        "True",
        "ACMECacheReady",
      ]);
    });
  });

  describe("CloudUnsealIdentityReady", () => {
    const kms = (unseal: Spec, more: Spec = {}) => cluster({ unseal, ...more });
    it("each provider's reasons", () => {
      const aws = { type: "awskms", awskms: { region: "eu-west-1", kmsKeyID: "k" } };
      assert.deepEqual(
        pair(cloudUnsealIdentity(kms({ ...aws, credentialsSecretRef: { name: "s" } }), secrets())),
        ["False", "CredentialsSecretMissing"],
      );
      assert.deepEqual(
        pair(cloudUnsealIdentity(kms({ ...aws, credentialsSecretRef: { name: "s" } }), secrets("s"))),
        ["True", "Ready"],
      );
      assert.deepEqual(pair(cloudUnsealIdentity(kms(aws), secrets())), ["True", "AmbientIdentityAssumed"]);
      assert.deepEqual(
        pair(
          cloudUnsealIdentity(
            kms(aws, { serviceAccount: { annotations: { "eks.amazonaws.com/role-arn": "r" } } }),
            secrets(),
          ),
        ),
        ["True", "WorkloadIdentityConfigured"],
      );
      const azure = { type: "azurekeyvault", azureKeyVault: { vaultName: "v", keyName: "k" } };
      assert.deepEqual(
        pair(cloudUnsealIdentity(kms(azure, { serviceAccount: { annotations: { a: "b" } } }), secrets())),
        ["True", "AmbientIdentityAssumed"],
        "Azure needs the pod labels too",
      );
      const oci = { type: "ocikms", ocikms: { keyID: "k", cryptoEndpoint: "e", managementEndpoint: "m" } };
      assert.deepEqual(
        pair(cloudUnsealIdentity(kms({ ...oci, credentialsSecretRef: { name: "s" } }), secrets("s"))),
        ["False", "PrerequisitesMissing"],
      );
    });
  });

  describe("APIServerNetworkReady and ACMEIntegrationReady", () => {
    it("endpoint addresses, the Service address only, none, an invalid one", () => {
      const seen = { serviceIPs: ["10.0.0.1"], endpointIPs: ["192.0.2.5"] };
      assert.deepEqual(pair(apiServerNetwork(cluster({}), seen)), ["True", "APIServerNetworkReady"]);
      assert.deepEqual(pair(apiServerNetwork(cluster({}), { ...seen, endpointIPs: [] })), [
        "Unknown",
        "APIServerEndpointIPsRecommended",
      ]);
      assert.deepEqual(pair(apiServerNetwork(cluster({ network: { apiServerCIDR: "10.0.0.1/32" } }), seen)), [
        "Unknown",
        "APIServerEndpointIPsRecommended",
      ]);
      assert.deepEqual(pair(apiServerNetwork(cluster({}), { serviceIPs: [], endpointIPs: [] })), [
        "False",
        "APIServerNetworkConfigurationInvalid",
      ]);
      assert.deepEqual(
        pair(apiServerNetwork(cluster({ network: { apiServerEndpointIPs: ["nope"] } }), seen)),
        ["False", "APIServerNetworkConfigurationInvalid"],
      );
    });
    it("ACME behind a Gateway needs passthrough and the Gateway API", () => {
      const acme = (gateway: Spec) =>
        cluster({ tls: { mode: "ACME", acme: { directoryURL: "https://ca" } }, gateway });
      const gw = { enabled: true, hostname: "h", gatewayRef: { name: "gw" } };
      assert.deepEqual(pair(acmeIntegration(acme(gw), true)), [
        "False",
        "ACMEGatewayNotConfiguredForPassthrough",
      ]);
      assert.deepEqual(pair(acmeIntegration(acme({ ...gw, tlsPassthrough: true }), false)), [
        "False",
        "GatewayAPIMissing",
      ]);
      assert.deepEqual(pair(acmeIntegration(acme({ ...gw, tlsPassthrough: true }), true)), [
        "True",
        "ACMEIntegrationReady",
      ]);
    });
  });

  describe("UserAccessBootstrap", () => {
    const selfInit = (requests: Spec[]) => cluster({ selfInit: { enabled: true, requests } });
    it("Disabled without self-init, Unverified without a user login, Configured with one", () => {
      assert.deepEqual(pair(userAccessBootstrap(cluster({}))), ["False", "Disabled"]);
      const operatorOnly = selfInit([
        { name: "jwt", operation: "update", path: "sys/auth/jwt-operator", authMethod: { type: "jwt" } },
        { name: "tok", operation: "update", path: "auth/token/roles/x" },
        { name: "kv", operation: "update", path: "sys/auth/kv", authMethod: { type: "kv" } },
      ]);
      assert.deepEqual(pair(userAccessBootstrap(operatorOnly)), ["Unknown", "UserAccessUnverified"]);
      const users = selfInit([
        { name: "up", operation: "update", path: "sys/auth/userpass", authMethod: { type: "userpass" } },
        { name: "ldap", operation: "update", path: "/auth/ldap/config" },
      ]);
      const r = userAccessBootstrap(users);
      assert.deepEqual(pair(r), ["True", "UserAccessConfigured"]);
      assert.match(r.message, /auth\/ldap, auth\/userpass/);
    });
  });

  it("the Secrets the conditions name wake their cluster (a backup token created later)", () => {
    const withBackup = cluster({
      backup: {
        tokenSecretRef: { name: "tok" },
        target: { bucket: "b", credentialsSecretRef: { name: "cred" } },
      },
      unseal: { type: "awskms", awskms: { kmsKeyID: "k" }, credentialsSecretRef: { name: "kms" } },
    });
    const informer = {
      list: (ns?: string) => (ns === "vault" ? [withBackup, cluster({})] : []),
    } as unknown as Informer<OpenBaoCluster>;
    const map = secretClusters(informer);
    const secret = (name: string) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: "vault" },
    });
    for (const name of ["tok", "cred", "kms"]) assert.deepEqual(map(secret(name)), ["vault/bao"], name);
    assert.deepEqual(map(secret("other")), []);
  });

  describe("which conditions a pass sets", () => {
    const facts: ReadinessFacts = {
      secrets: new Map(),
      claims: new Map(),
      statefulSets: [],
      apiServer: { serviceIPs: ["10.0.0.1"], endpointIPs: ["192.0.2.5"] },
    };
    const types = (set: { type: string }[]) => set.map((s) => s.type).sort();
    it("only the configured features' conditions, APIServerNetworkReady always; the others go", () => {
      const plan = readinessConditions(cluster({}), facts, false);
      const always = ["APIServerNetworkReady", "UserAccessBootstrap"];
      assert.deepEqual(types(plan.set), always);
      assert.deepEqual([...plan.remove].sort(), READINESS_TYPES.filter((t) => !always.includes(t)).sort());
      const withBackup = readinessConditions(
        cluster({ backup: { jwtAuthRole: "r", target: {} } }),
        facts,
        false,
      );
      assert.deepEqual(types(withBackup.set), [
        "APIServerNetworkReady",
        "BackupConfigurationReady",
        "UserAccessBootstrap",
      ]);
    });
    it("Paused while paused, ProfileNotSet without a profile (ACMECacheReady neither), nothing without facts", () => {
      const acme = {
        replicas: 3,
        tls: {
          mode: "ACME",
          acme: { directoryURL: "https://ca", sharedCache: { mode: "ExistingPVC", existingClaimName: "x" } },
        },
        backup: { jwtAuthRole: "r", target: {} },
      };
      const paused = readinessConditions(cluster(acme), undefined, true);
      assert.deepEqual(paused.set.map((s) => [s.type, s.status, s.reason]).sort(), [
        ["ACMEIntegrationReady", "Unknown", "Paused"],
        ["APIServerNetworkReady", "Unknown", "Paused"],
        ["BackupConfigurationReady", "Unknown", "Paused"],
        ["UserAccessBootstrap", "False", "Disabled"],
      ]);
      assert.equal(paused.remove.includes("ACMECacheReady"), false, "left as it was");
      const noProfile = readinessConditions(cluster({ ...acme, profile: undefined }), facts, false);
      assert.deepEqual(noProfile.set.map((s) => [s.type, s.reason]).sort(), [
        ["ACMECacheReady", "ACMECacheMissing"],
        ["ACMEIntegrationReady", "ProfileNotSet"],
        ["APIServerNetworkReady", "ProfileNotSet"],
        ["BackupConfigurationReady", "ProfileNotSet"],
        ["UserAccessBootstrap", "Disabled"],
      ]);
      // Nothing gathered (the pass stopped before it could): only what the spec alone decides.
      assert.deepEqual(
        readinessConditions(cluster(acme), undefined, false).set.map((s) => s.type),
        ["UserAccessBootstrap"],
      );
    });
  });
});

describe("Gateway API objects wake the clusters that use them", () => {
  const c = (name: string, gateway: Spec | undefined, namespace = "vault") =>
    ({
      metadata: { name, namespace },
      spec: { version: "2.4.0", ...(gateway ? { gateway } : {}) },
    }) as unknown as OpenBaoCluster;
  const clusters = [
    c("same-ns", { enabled: true, gatewayRef: { name: "gw" } }),
    c("other-ns", { enabled: true, gatewayRef: { name: "gw", namespace: "edge" } }),
    c("disabled", { enabled: false, gatewayRef: { name: "gw" } }),
    c("none", undefined),
    c("unknown-gw", { enabled: true, gatewayRef: { name: "elsewhere", namespace: "far" } }),
  ];
  const gw = (name: string, namespace: string, cls: string) =>
    ({ metadata: { name, namespace }, spec: { gatewayClassName: cls } }) as KubeObject;

  it("a Gateway: the clusters whose gatewayRef names it, in its namespace", () => {
    assert.deepEqual(clustersOfGateway(clusters, gw("gw", "vault", "a")), ["vault/same-ns"]);
    assert.deepEqual(clustersOfGateway(clusters, gw("gw", "edge", "a")), ["vault/other-ns"]);
    assert.deepEqual(clustersOfGateway(clusters, gw("other", "vault", "a")), []);
  });

  it("a GatewayClass: the clusters whose Gateway names it, and those whose Gateway is not cached", () => {
    const cached = new Map([
      ["vault/gw", gw("gw", "vault", "a")],
      ["edge/gw", gw("gw", "edge", "b")],
    ]);
    const of = (ns: string, name: string) => cached.get(`${ns}/${name}`);
    const cls = (name: string) => ({ metadata: { name } }) as KubeObject;
    assert.deepEqual(clustersOfGatewayClass(clusters, of, cls("a")), ["vault/same-ns", "vault/unknown-gw"]);
    assert.deepEqual(clustersOfGatewayClass(clusters, of, cls("b")), ["vault/other-ns", "vault/unknown-gw"]);
  });

  it("a kind found served: every cluster that asks for a Gateway", () => {
    assert.deepEqual(clustersUsingGateways(clusters), [
      "vault/same-ns",
      "vault/other-ns",
      "vault/unknown-gw",
    ]);
  });
});
