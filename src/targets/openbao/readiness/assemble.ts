/**
 * The one place the readiness conditions are decided for a pass: which apply (a condition is set
 * only while its feature is configured, APIServerNetworkReady and UserAccessBootstrap always, as
 * upstream; UserAccessBootstrap reads the spec only and is never paused), Paused while the
 * cluster is paused and ProfileNotSet until spec.profile is set (upstream evaluates neither then;
 * ACMECacheReady, which upstream never pauses, is left as it was or evaluated), else each family's
 * evaluation held to its contract.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import {
  OpenBaoClusterCondition as C,
  OpenBaoClusterReason as R,
} from "../../../apis/openbaocluster-names.js";
import { acmeIntegration } from "./acme.js";
import { apiServerNetwork } from "./api-server.js";
import { backupConfiguration } from "./backup.js";
import { acmeCache, acmeCacheApplies, acmeMode, auditFileStorage } from "./claims.js";
import { cloudUnsealApplies, cloudUnsealIdentity } from "./cloud-unseal.js";
import { type Readiness, type ReadinessType, withinContract } from "./contract.js";
import type { ReadinessFacts } from "./facts.js";
import { gatewayIntegration } from "./gateway.js";
import { userAccessBootstrap } from "./user-access.js";

const NO_FACTS: ReadinessFacts = {
  secrets: new Map(),
  claims: new Map(),
  statefulSets: [],
  apiServer: { serviceIPs: [], endpointIPs: [] },
};

export interface ReadinessCondition extends Readiness {
  type: ReadinessType;
}

export interface ReadinessPlan {
  set: ReadinessCondition[];
  /** Conditions whose feature is not configured: they go. */
  remove: ReadinessType[];
}

interface Family {
  type: ReadinessType;
  applies: (c: OpenBaoCluster) => boolean;
  /** Upstream sets Paused and ProfileNotSet on it. */
  pausable: boolean;
  evaluate: (c: OpenBaoCluster, f: ReadinessFacts) => Readiness;
  /** Decided from the spec alone: set even when the pass gathered nothing (paused included). */
  specOnly?: boolean;
}

const FAMILIES: Family[] = [
  {
    type: C.APIServerNetworkReady,
    applies: () => true,
    pausable: true,
    evaluate: (c, f) => apiServerNetwork(c, f.apiServer),
  },
  {
    type: C.ACMEIntegrationReady,
    applies: acmeMode,
    pausable: true,
    evaluate: (c, f) =>
      acmeIntegration(
        c,
        f.gateway ? f.gateway.gateway !== "not-served" && f.gateway.route !== "not-served" : undefined,
      ),
  },
  {
    type: C.ACMECacheReady,
    applies: acmeCacheApplies,
    pausable: false,
    evaluate: (c, f) => acmeCache(c, f.claims),
  },
  {
    type: C.AuditFileStorageReady,
    applies: (c) => c.spec.auditFileStorage !== undefined,
    pausable: true,
    evaluate: (c, f) => auditFileStorage(c, f.claims, f.statefulSets),
  },
  {
    type: C.GatewayIntegrationReady,
    applies: (c) => c.spec.gateway?.enabled === true,
    pausable: true,
    evaluate: (c, f) =>
      f.gateway
        ? gatewayIntegration(c, f.gateway)
        : { status: "Unknown", reason: R.Unknown, message: "the Gateway was not looked at this pass" },
  },
  {
    type: C.BackupConfigurationReady,
    applies: (c) => c.spec.backup !== undefined,
    pausable: true,
    evaluate: (c, f) => backupConfiguration(c, f.secrets),
  },
  {
    type: C.CloudUnsealIdentityReady,
    applies: cloudUnsealApplies,
    pausable: true,
    evaluate: (c, f) => cloudUnsealIdentity(c, f.secrets),
  },
  {
    type: C.UserAccessBootstrap,
    applies: () => true,
    pausable: false,
    specOnly: true,
    evaluate: (c) => userAccessBootstrap(c),
  },
];

/** Every readiness condition type, for docs and tests. */
export const READINESS_TYPES: readonly ReadinessType[] = FAMILIES.map((f) => f.type);

/**
 * The readiness conditions of a pass. `facts` is undefined when the pass gathered none (paused, or
 * stopped before it could): applicable conditions are then left as they were, unless paused.
 */
export function readinessConditions(
  c: OpenBaoCluster,
  facts: ReadinessFacts | undefined,
  paused: boolean,
): ReadinessPlan {
  const plan: ReadinessPlan = { set: [], remove: [] };
  const profileSet = c.spec.profile === "Hardened" || c.spec.profile === "Development";
  for (const family of FAMILIES) {
    if (!family.applies(c)) {
      plan.remove.push(family.type);
      continue;
    }
    if (family.pausable && paused) {
      plan.set.push({
        type: family.type,
        status: "Unknown",
        reason: R.Paused,
        message: "spec.paused: not evaluated while reconciliation is paused",
      });
      continue;
    }
    if (family.pausable && !profileSet) {
      plan.set.push({
        type: family.type,
        status: "Unknown",
        reason: R.ProfileNotSet,
        message: "not evaluated until spec.profile is set (Hardened or Development), as upstream",
      });
      continue;
    }
    if (family.specOnly) {
      plan.set.push({ type: family.type, ...withinContract(family.type, family.evaluate(c, NO_FACTS)) });
      continue;
    }
    if (!facts) continue;
    plan.set.push({ type: family.type, ...withinContract(family.type, family.evaluate(c, facts)) });
  }
  return plan;
}
