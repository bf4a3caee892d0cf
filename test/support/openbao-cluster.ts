import {
  crdFor,
  OpenBaoApiVersion,
  OpenBaoClusterKind,
  OpenBaoRestoreKind,
  OpenBaoTenantKind,
} from "../../src/apis/index.js";
import type { OpenBaoCluster } from "../../src/apis/openbaocluster.js";
import { applyAny } from "../../src/runtime/apply.js";
import { liveReader } from "../../src/runtime/cached-reader.js";
import type { KubeClient } from "../../src/runtime/client.js";
import { EventRecorder } from "../../src/runtime/events.js";
import { silentLogger } from "../../src/runtime/log.js";
import type { KubeObject } from "../../src/runtime/types.js";
import type { ServiceContext } from "../../src/targets/openbao/workload/service-context.js";

// Real OpenBaoCluster objects for the openbao target's service tests: the generated CRD installed
// on the test's API server, and objects read back from it, so owner references carry a real uid.

/**
 * Both of the openbao target's CRDs, as the chart installs them: its restore controller watches
 * OpenBaoRestores, and a manager waits for every informer's first list before any controller runs.
 */
export async function installOpenBaoClusterCrd(client: KubeClient): Promise<void> {
  for (const kind of [OpenBaoClusterKind, OpenBaoRestoreKind]) {
    await applyAny(client, crdFor(kind) as unknown as KubeObject, {
      fieldManager: "test-setup",
      force: true,
    });
    await waitServed(client, kind);
  }
}

/** The OpenBaoTenant CRD, for the tests of tenants (the other openbao tests do without it). */
export async function installOpenBaoTenantCrd(client: KubeClient): Promise<void> {
  await applyAny(client, crdFor(OpenBaoTenantKind) as unknown as KubeObject, {
    fieldManager: "test-setup",
    force: true,
  });
  await waitServed(client, OpenBaoTenantKind);
}

async function waitServed(client: KubeClient, kind: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    client.resources.refresh();
    if (await client.resources.find(OpenBaoApiVersion, kind)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the ${kind} CRD was not served within 30 s`);
}

export async function createOpenBaoCluster(
  client: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  labels?: Record<string, string>,
): Promise<OpenBaoCluster> {
  return (await applyAny(
    client,
    {
      apiVersion: OpenBaoApiVersion,
      kind: OpenBaoClusterKind,
      metadata: { name, namespace, ...(labels ? { labels } : {}) },
      spec: { version: "2.7.2", storage: { size: "1Gi" }, ...spec },
    },
    { fieldManager: "test-user", force: true },
  )) as unknown as OpenBaoCluster;
}

/** A service context over a real client and a real event recorder; the clock is the caller's. */
export function serviceContext(
  client: KubeClient,
  owner: OpenBaoCluster,
  fieldManager: string,
  now: () => Date = () => new Date(),
): ServiceContext & { recorder: EventRecorder } {
  const log = silentLogger();
  const recorder = new EventRecorder(client, "platform-operator/openbao", "test", log);
  return {
    client,
    // Every read is live here: these tests drive one service against the API server, no informers.
    reader: liveReader(client),
    owner: owner as unknown as KubeObject,
    fieldManager,
    log,
    events: recorder,
    recorder,
    now,
  };
}
