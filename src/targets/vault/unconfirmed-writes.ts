import { createHash } from "node:crypto";
import { canonicalJson } from "../../runtime/canonical-json.js";
import type { DataTree } from "./tree.js";

/**
 * Data writes whose answer never came (a timeout, a reset connection): OpenBao may have stored
 * them or not. If the next read finds the path without an owner marker and holding exactly what
 * was sent, the write landed and the path is this object's own: its keys stay managed and it is
 * not taken for somebody else's fresh path. Only a digest of the data is kept, never the values.
 */
export class UnconfirmedWrites {
  private readonly writes = new Map<
    string,
    { uid: string; path: string; digest: string; managedKeys: string[] }
  >();

  record(key: string, uid: string, path: string, data: DataTree, managedKeys: readonly string[]): void {
    this.writes.set(key, { uid, path, digest: digestOf(data), managedKeys: [...managedKeys] });
  }

  /** The keys the unconfirmed write would have made managed, when the path holds exactly what it sent. */
  landed(key: string, uid: string, path: string, data: DataTree): string[] | undefined {
    const w = this.writes.get(key);
    if (!w || w.uid !== uid || w.path !== path) return undefined;
    return w.digest === digestOf(data) ? w.managedKeys : undefined;
  }

  forget(key: string): void {
    this.writes.delete(key);
  }
}

/** SHA-256 of the tree as canonical JSON (own keys, sorted): blind to key order. */
export function digestOf(tree: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(tree, { loose: true }))
    .digest("hex");
}
