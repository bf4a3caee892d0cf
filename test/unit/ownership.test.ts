import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AlreadyOwnedError,
  controllerRefOf,
  groupOf,
  isControlledBy,
  setControllerReference,
  setOwnerReference,
} from "../../src/runtime/ownership.js";
import type { KubeObject } from "../../src/runtime/types.js";

const owner = (uid = "u-1", name = "core", namespace: string | null = "ns"): KubeObject => ({
  apiVersion: "apps.gitlab.com/v2alpha1",
  kind: "GitLabCore",
  metadata: { name, namespace: namespace ?? undefined, uid },
});
const child = (namespace: string | null = "ns"): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "c", namespace: namespace ?? undefined },
});

describe("setControllerReference", () => {
  it("sets every field the garbage collector and controllers rely on", () => {
    const c = setControllerReference(owner(), child());
    assert.deepEqual(c.metadata.ownerReferences, [
      {
        apiVersion: "apps.gitlab.com/v2alpha1",
        kind: "GitLabCore",
        name: "core",
        uid: "u-1",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.ok(isControlledBy(c, { group: "apps.gitlab.com", kind: "GitLabCore", uid: "u-1" }));
    assert.ok(!isControlledBy(c, { group: "other.dev", kind: "GitLabCore", uid: "u-1" }));
  });

  it("is idempotent for the same owner and keeps other, non-controlling owners", () => {
    const c = child();
    setOwnerReference({ ...owner("u-9", "other"), kind: "Other" }, c);
    setControllerReference(owner(), c);
    setControllerReference({ ...owner(), apiVersion: "apps.gitlab.com/v2" }, c);
    assert.equal(c.metadata.ownerReferences!.length, 2);
    assert.equal(controllerRefOf(c)!.apiVersion, "apps.gitlab.com/v2", "the owner's reference is refreshed");
  });

  it("refuses a second controller with an error naming both", () => {
    const c = setControllerReference(owner("u-1", "first"), child());
    assert.throws(
      () => setControllerReference(owner("u-2", "second"), c),
      (e: unknown) =>
        e instanceof AlreadyOwnedError &&
        /already names a controller, GitLabCore first/.test(e.message) &&
        /GitLabCore second/.test(e.message),
    );
    assert.equal(c.metadata.ownerReferences!.length, 1, "nothing changed");
  });

  it("refuses owners the garbage collector could not resolve, and owners not read from the server", () => {
    assert.throws(() => setControllerReference(owner(), child("elsewhere")), /cannot cross namespaces/);
    assert.throws(
      () => setControllerReference(owner(), child(null)),
      /cluster-scoped object cannot be owned/,
    );
    assert.throws(
      () => setControllerReference({ ...owner(), metadata: { name: "x", namespace: "ns" } }, child()),
      /metadata\.uid is empty/,
    );
    assert.throws(() => setControllerReference({ ...owner(), kind: undefined }, child()), /kind is empty/);
    assert.throws(
      () =>
        setControllerReference(
          { ...owner(), apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata" },
          child(),
        ),
      /metadata-only object does not say its own kind/,
    );
    // A cluster-scoped owner may own namespaced children.
    setControllerReference(owner("u-3", "cluster", null), child());
  });

  it("reads the group of an apiVersion", () => {
    assert.equal(groupOf("v1"), "");
    assert.equal(groupOf("apps/v1"), "apps");
  });
});
