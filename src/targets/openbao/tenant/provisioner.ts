/**
 * The OpenBaoTenant provisioner's pass for one tenant, as upstream orders it: the guard (a refused
 * tenant gets no finalizer and touches nothing), the finalizer, the target namespace, then every
 * planned object by server-side apply and the namespace's Pod Security labels (not in external
 * mode, where a platform layer owns them and the namespace is never written); on delete, nothing
 * while an OpenBaoCluster remains there, then the Roles and RoleBindings. Upstream writes a
 * condition only for a refusal and no events; here every outcome is a Provisioned condition, and
 * each change of outcome an event.
 */
import type { OpenBaoCluster } from "../../../apis/openbaocluster.js";
import { OpenBaoApiVersion } from "../../../apis/openbaocluster-names.js";
import type { OpenBaoRestore } from "../../../apis/openbaorestore.js";
import type { OpenBaoTenant, OpenBaoTenantStatus } from "../../../apis/openbaotenant.js";
import {
  OpenBaoTenantCondition,
  OpenBaoTenantFinalizer,
  OpenBaoTenantKind,
  OpenBaoTenantManagers,
  OpenBaoTenantReason,
  type OpenBaoTenantReasonType,
} from "../../../apis/openbaotenant-names.js";
import { applyIfChanged } from "../../../runtime/apply.js";
import {
  LIMIT_RANGE,
  NAMESPACE,
  RESOURCE_QUOTA,
  ROLE,
  ROLE_BINDING,
} from "../../../runtime/builtin-types.js";
import { type CachedReader, liveReader } from "../../../runtime/cached-reader.js";
import type { KubeClient } from "../../../runtime/client.js";
import { setCondition } from "../../../runtime/conditions.js";
import { done, type ReconcileResult, requeueAfter } from "../../../runtime/controller.js";
import { errorMessage, isNotFound } from "../../../runtime/errors.js";
import type { KindEvents } from "../../../runtime/events.js";
import { addFinalizer, hasFinalizer, removeFinalizer } from "../../../runtime/finalizers.js";
import { type StatusCache, StatusWriter } from "../../../runtime/status.js";
import type { KubeObject, ResourceType } from "../../../runtime/types.js";
import { OPENBAOCLUSTER } from "../cluster-ref.js";
import { OPENBAORESTORE } from "../restore/types.js";
import { type DeniedNamespaces, refuseTarget } from "./guard.js";
import {
  type OperatorIdentity,
  type PodSecurityLabelMode,
  planOffboarding,
  planTenant,
  type RoleRef,
  TENANT_LABELS,
} from "./plan.js";
import { OPENBAOTENANT } from "./types.js";

const TYPES: Record<string, ResourceType> = {
  Role: ROLE,
  RoleBinding: ROLE_BINDING,
  ResourceQuota: RESOURCE_QUOTA,
  LimitRange: LIMIT_RANGE,
};

/** Upstream's waits: a tenant being deleted looks again while clusters remain; a missing namespace after a minute. */
export const OFFBOARD_POLL_MS = 5_000;
export const MISSING_NAMESPACE_POLL_MS = 60_000;

/** What a pass reads: the target's informers (CachedReader), or the API server when none is given. */
export type TenantReader = Pick<CachedReader, "get" | "list">;

export interface TenantProvisionerDeps {
  client: KubeClient;
  /**
   * Reads served from the target's informers (the tenant objects and the namespaces kept with
   * managedFields, the clusters and restores), so a pass over a settled tenant sends no request;
   * unset, every read goes to the API server.
   */
  reader?: TenantReader;
  /** The tenant informers the controller reads (eitherCache): the status memory follows their own-write record. */
  cache?: StatusCache;
  /** tenants.clusterSelector: only the clusters this install manages count (allow-lists, offboarding). */
  clusterSelector?: string;
  events: KindEvents<OpenBaoTenantReasonType>;
  operator: OperatorIdentity;
  /** tenants.namespacePodSecurityLabels (default enforce). */
  podSecurityLabels?: PodSecurityLabelMode;
  /** tenants.deniedNamespaces / deniedNamespacePrefixes (default: upstream's). */
  denied?: DeniedNamespaces;
  now?: () => Date;
}

interface Outcome {
  provisioned: boolean;
  reason: OpenBaoTenantReasonType;
  message: string;
  /** lastError: set for every outcome that is not a success (or a wait while offboarding). */
  error?: string;
}

export class TenantProvisioner {
  private readonly status: StatusWriter<OpenBaoTenantStatus>;
  private readonly now: () => Date;
  private readonly reader: TenantReader;

  constructor(private readonly d: TenantProvisionerDeps) {
    this.now = d.now ?? (() => new Date());
    this.reader = d.reader ?? liveReader(d.client);
    this.status = new StatusWriter<OpenBaoTenantStatus>({
      client: d.client,
      type: OPENBAOTENANT,
      fieldManager: OpenBaoTenantManagers.fieldManager,
      ...(d.cache ? { cache: d.cache } : {}),
    });
  }

  /** Forget what was written for a tenant that is gone. */
  forget(key: string): void {
    this.status.forget(key);
  }

  async reconcile(cached: OpenBaoTenant, signal?: AbortSignal): Promise<ReconcileResult> {
    const key = `${cached.metadata.namespace}/${cached.metadata.name}`;
    let t: OpenBaoTenant = {
      ...this.status.freshest(key, cached),
      apiVersion: OpenBaoApiVersion,
      kind: OpenBaoTenantKind,
    };
    const target = t.spec.targetNamespace;
    const refused = refuseTarget(
      t.metadata.namespace ?? "",
      target,
      this.d.operator.namespace,
      this.d.denied,
    );
    if (refused) {
      // Never provisioned, so nothing of it to remove; a finalizer from before a change goes.
      if (t.metadata.deletionTimestamp || hasFinalizer(t, OpenBaoTenantFinalizer))
        t = await removeFinalizer(this.d.client, OPENBAOTENANT, t, OpenBaoTenantFinalizer, signal);
      if (t.metadata.deletionTimestamp) return done();
      await this.report(t, { provisioned: false, ...refused, error: refused.message }, signal);
      return done();
    }
    if (t.metadata.deletionTimestamp) return this.offboard(t, signal);
    t = {
      ...(await addFinalizer(this.d.client, OPENBAOTENANT, t, OpenBaoTenantFinalizer, signal)),
      status: t.status,
    };
    const namespace = await this.reader.get(NAMESPACE, target, undefined, { managedFields: true });
    if (!namespace) {
      const message = `target namespace ${target} not found`;
      await this.report(
        t,
        { provisioned: false, reason: OpenBaoTenantReason.TargetNamespaceNotFound, message, error: message },
        signal,
      );
      return requeueAfter(MISSING_NAMESPACE_POLL_MS);
    }
    try {
      const [clusters, restores] = await Promise.all([
        this.reader.list<OpenBaoCluster>(OPENBAOCLUSTER, this.clustersIn(target)),
        this.reader.list<OpenBaoRestore>(OPENBAORESTORE, { namespace: target }),
      ]);
      const plan = planTenant({
        tenant: t,
        clusters,
        restores,
        operator: this.d.operator,
        ...(this.d.podSecurityLabels ? { podSecurityLabels: this.d.podSecurityLabels } : {}),
        ...(this.d.denied ? { denied: this.d.denied } : {}),
      });
      if (plan.refused) throw new Error(plan.refused.message); // refuseTarget answered above
      for (const o of plan.apply)
        await this.applyIfChanged(
          o,
          await this.reader.get(TYPES[o.kind!]!, o.metadata.name!, target, {
            managedFields: true,
            labels: o.metadata.labels ?? {},
          }),
        );
      if (plan.namespaceLabels)
        await this.applyIfChanged(
          { apiVersion: "v1", kind: "Namespace", metadata: { name: target, labels: plan.namespaceLabels } },
          namespace,
        );
      await this.remove(target, plan.remove);
      const labels = plan.namespaceLabels
        ? "Pod Security restricted"
        : "Pod Security labels left to the platform (namespacePodSecurityLabels external)";
      const message = `namespace ${target} onboarded: ${plan.apply.length} objects applied, ${labels}`;
      await this.report(t, { provisioned: true, reason: OpenBaoTenantReason.Provisioned, message }, signal);
      return done();
    } catch (e) {
      if (signal?.aborted) throw e;
      const message = `provisioning namespace ${target} failed: ${errorMessage(e)}`;
      await this.report(
        t,
        { provisioned: false, reason: OpenBaoTenantReason.ProvisioningFailed, message, error: message },
        signal,
      );
      throw e;
    }
  }

  private async offboard(t: OpenBaoTenant, signal?: AbortSignal): Promise<ReconcileResult> {
    if (!hasFinalizer(t, OpenBaoTenantFinalizer)) return done();
    const target = t.spec.targetNamespace;
    const clusters = await this.reader.list(OPENBAOCLUSTER, this.clustersIn(target));
    const plan = planOffboarding(clusters.length);
    if ("waitFor" in plan) {
      const message = `offboarding waits: ${plan.waitFor} OpenBaoCluster(s) remain in namespace ${target}, whose access stays until they are gone`;
      await this.report(
        t,
        { provisioned: true, reason: OpenBaoTenantReason.ClustersRemain, message },
        signal,
      );
      return requeueAfter(OFFBOARD_POLL_MS);
    }
    await this.remove(target, plan.remove);
    this.d.events.record(
      t,
      {
        type: "Normal",
        reason: OpenBaoTenantReason.Offboarded,
        action: "Offboard",
        note: `the operator's Roles and RoleBindings in namespace ${target} removed; its quota, limit range and Pod Security labels stay`,
      },
      OPENBAOTENANT,
    );
    await removeFinalizer(this.d.client, OPENBAOTENANT, t, OpenBaoTenantFinalizer, signal);
    return done();
  }

  private clustersIn(namespace: string): { namespace: string; labelSelector?: string } {
    return this.d.clusterSelector ? { namespace, labelSelector: this.d.clusterSelector } : { namespace };
  }

  /** Server-side apply only when the object would change (decided from its managedFields when cached). */
  private async applyIfChanged(intent: KubeObject, live: KubeObject | undefined): Promise<void> {
    await applyIfChanged(this.d.client, intent, {
      fieldManager: OpenBaoTenantManagers.fieldManager,
      force: true,
      live: live ?? null,
    });
  }

  /** Deletes what the plan no longer wants; one already gone (in the cache) costs no request. */
  private async remove(namespace: string, refs: readonly RoleRef[]): Promise<void> {
    for (const r of refs) {
      const type = TYPES[r.kind]!;
      if (!(await this.reader.get(type, r.name, namespace, { labels: TENANT_LABELS }))) continue;
      await this.d.client.delete(type, r.name, namespace).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    }
  }

  /** Status, the Provisioned condition, and an event when the outcome is not the one reported last. */
  private async report(t: OpenBaoTenant, o: Outcome, signal?: AbortSignal): Promise<void> {
    const before = t.status?.conditions?.find((c) => c.type === OpenBaoTenantCondition.Provisioned);
    const changed = before?.reason !== o.reason || before?.message !== o.message;
    const next: OpenBaoTenantStatus = {
      provisioned: o.provisioned,
      ...(o.error ? { lastError: o.error } : {}),
      conditions: setCondition(
        t.status?.conditions,
        {
          type: OpenBaoTenantCondition.Provisioned,
          status: o.provisioned ? "True" : "False",
          reason: o.reason,
          message: o.message,
          ...(t.metadata.generation !== undefined ? { observedGeneration: t.metadata.generation } : {}),
        },
        this.now(),
      ),
    };
    await this.status.write(t as KubeObject & { status?: OpenBaoTenantStatus }, next, { signal });
    if (changed)
      this.d.events.record(
        t,
        {
          type:
            o.reason === OpenBaoTenantReason.Provisioned || o.reason === OpenBaoTenantReason.ClustersRemain
              ? "Normal"
              : "Warning",
          reason: o.reason,
          action: "Provision",
          note: o.message,
        },
        OPENBAOTENANT,
      );
  }
}
