import type { SnapshotStoreFactory } from "./ports.js";

/**
 * The object stores retention lists and deletes in, opened with the target's settings and the
 * credentials Secret's files. Backed by the executor's providers (objectstore/), the same code that
 * uploads, so listing sees exactly the keys the executor wrote.
 */
export const defaultSnapshotStores: SnapshotStoreFactory = async () => {
  throw new Error("listing snapshots needs the object store providers (objectstore/), not wired yet");
};
