/**
 * One GitLabSecrets pass: read the declared Secrets, plan (plan.ts), write what is missing, then
 * the status (the Ready condition, each Secret's readiness, observedGeneration). Secrets are read
 * from the API server, not a cache: the operator keeps no Secret values in memory. Values never
 * reach a log, an event or the status; only Secret and key names do.
 */

import { GitLabCoreApiVersion } from "../../../apis/gitlabcore-names.js";
import type { GitLabSecrets, GitLabSecretsStatus } from "../../../apis/gitlabsecrets.js";
import {
  GitLabSecretsCondition,
  GitLabSecretsKind,
  GitLabSecretsManagers,
  GitLabSecretsReason,
  type GitLabSecretsReasonType,
} from "../../../apis/gitlabsecrets-names.js";
import { SECRET } from "../../../runtime/builtin-types.js";
import type { KubeClient } from "../../../runtime/client.js";
import { setCondition } from "../../../runtime/conditions.js";
import { done, type ReconcileResult, retry } from "../../../runtime/controller.js";
import { errorMessage } from "../../../runtime/errors.js";
import type { EventRecorder } from "../../../runtime/events.js";
import { type StatusCache, StatusWriter } from "../../../runtime/status.js";
import type { KubeObject, ResourceType } from "../../../runtime/types.js";
import { cryptoSources, type Sources } from "./generate.js";
import {
  describeWrite,
  type ObservedSecret,
  planSecrets,
  type SecretStatus,
  type SecretsPlan,
  type SecretWrite,
} from "./plan.js";

export interface GitLabSecretsReconcilerDeps {
  client: KubeClient;
  type: ResourceType;
  /** The GitLabSecrets informer the controller reads: the status memory follows its own-write record. */
  cache?: StatusCache;
  events: EventRecorder;
  sources?: Sources;
  /** The target's observe-only mode: plan and report, write no Secret. */
  observeOnly?: boolean;
  now?: () => Date;
}

type SecretObject = KubeObject & { type?: string; data?: Record<string, string> };

export class GitLabSecretsReconciler {
  private readonly status: StatusWriter<GitLabSecretsStatus>;
  private readonly sources: Sources;
  private readonly now: () => Date;

  constructor(private readonly d: GitLabSecretsReconcilerDeps) {
    this.sources = d.sources ?? cryptoSources;
    this.now = d.now ?? (() => new Date());
    this.status = new StatusWriter<GitLabSecretsStatus>({
      client: d.client,
      type: d.type,
      fieldManager: GitLabSecretsManagers.fieldManager,
      ...(d.cache ? { cache: d.cache } : {}),
    });
  }

  forget(key: string): void {
    this.status.forget(key);
  }

  async reconcile(cached: GitLabSecrets, signal?: AbortSignal): Promise<ReconcileResult> {
    if (cached.metadata.deletionTimestamp) return done();
    const key = `${cached.metadata.namespace}/${cached.metadata.name}`;
    const gs: GitLabSecrets = {
      ...this.status.freshest(key, cached),
      apiVersion: GitLabCoreApiVersion,
      kind: GitLabSecretsKind,
    };
    const namespace = gs.metadata.namespace!;
    let plan: SecretsPlan;
    try {
      const observed = new Map<string, ObservedSecret | undefined>();
      const names = [
        ...(gs.spec?.secrets ?? []).map((s) => s.name),
        ...(gs.spec?.certificates ?? []).flatMap((c) => [c.tlsSecret, c.caSecret, c.chainSecret]),
      ];
      for (const name of names) {
        if (!name || observed.has(name)) continue;
        const live = await this.d.client.getOrUndefined<SecretObject>(SECRET, name, namespace);
        observed.set(
          name,
          live && {
            resourceVersion: live.metadata.resourceVersion,
            type: live.type,
            labels: live.metadata.labels,
            data: live.data,
          },
        );
      }
      plan = await planSecrets({
        spec: gs.spec,
        labels: gs.metadata.labels ?? {},
        observed,
        sources: this.sources,
        recorded: new Map((gs.status?.secrets ?? []).map((st) => [st.name, st.readyUnits ?? []])),
        now: this.now(),
      });
      if (this.d.observeOnly && plan.writes.length) {
        await this.report(
          gs,
          {
            ready: false,
            reason: GitLabSecretsReason.ObserveOnly,
            message: `observe-only, nothing written; would have: ${plan.writes.map(describeWrite).join("; ")}`,
          },
          // Nothing was written: the status keeps what it recorded, and no unit becomes ready.
          plan.statuses.map((st) => {
            const pending = plan.writes.some((w) => w.name === st.name && Object.keys(w.data).length);
            const before = gs.status?.secrets?.find((b) => b.name === st.name)?.readyUnits;
            return {
              name: st.name,
              ready: st.ready && !pending,
              ...(pending
                ? before
                  ? { readyUnits: before }
                  : {}
                : st.readyUnits
                  ? { readyUnits: st.readyUnits }
                  : {}),
            };
          }),
          signal,
        );
        return done();
      }
      for (const w of plan.writes) await this.write(namespace, w);
    } catch (e) {
      if (signal?.aborted) throw e;
      const message = `writing the declared Secrets failed: ${errorMessage(e)}`;
      await this.report(
        gs,
        { ready: false, reason: GitLabSecretsReason.SecretWriteFailed, message },
        undefined,
        signal,
      );
      // A conflict (the Secret changed since it was read, or was created meanwhile) is read again.
      return retry(GitLabSecretsReason.SecretWriteFailed);
    }
    if (plan.writes.length)
      this.d.events.record(
        gs,
        {
          type: "Normal",
          reason: GitLabSecretsReason.SecretsGenerated,
          action: "Generate",
          note: plan.writes.map(describeWrite).join("; "),
        },
        this.d.type,
      );
    const ready = plan.reason === GitLabSecretsReason.SecretsReady;
    await this.report(gs, { ready, reason: plan.reason, message: plan.message }, plan.statuses, signal);
    // Refused or invalid: nothing changes until the spec does (or a Secret, which the watch brings).
    return done();
  }

  /** Creates a missing Secret, or merge-patches the keys and labels it lacks, guarded by the read's version. */
  private async write(namespace: string, w: SecretWrite): Promise<void> {
    if (w.op === "create") {
      await this.d.client.create(SECRET, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: w.name, namespace, labels: w.labels },
        type: w.type,
        data: w.data,
      } as KubeObject);
      return;
    }
    const patch: { metadata: Record<string, unknown>; data?: Record<string, string> } = {
      metadata: { resourceVersion: w.resourceVersion },
    };
    if (Object.keys(w.labels).length) patch.metadata["labels"] = w.labels;
    if (Object.keys(w.data).length) patch.data = w.data;
    await this.d.client.mergePatch(SECRET, w.name, namespace, patch);
  }

  private async report(
    gs: GitLabSecrets,
    o: { ready: boolean; reason: GitLabSecretsReasonType; message: string },
    secrets: SecretStatus[] | undefined,
    signal?: AbortSignal,
  ): Promise<void> {
    const before = gs.status?.conditions?.find((c) => c.type === GitLabSecretsCondition.Ready);
    const generation = gs.metadata.generation;
    const next: GitLabSecretsStatus = {
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      // A failed write keeps the last known per-Secret readiness rather than guessing.
      ...((secrets ?? gs.status?.secrets) ? { secrets: secrets ?? gs.status?.secrets } : {}),
      conditions: setCondition(
        gs.status?.conditions,
        {
          type: GitLabSecretsCondition.Ready,
          status: o.ready ? "True" : "False",
          reason: o.reason,
          message: o.message,
          ...(generation !== undefined ? { observedGeneration: generation } : {}),
        },
        this.now(),
      ),
    };
    await this.status.write(gs as KubeObject & { status?: GitLabSecretsStatus }, next, { signal });
    if (!o.ready && (before?.reason !== o.reason || before?.message !== o.message))
      this.d.events.record(
        gs,
        { type: "Warning", reason: o.reason, action: "Generate", note: o.message },
        this.d.type,
      );
  }
}
