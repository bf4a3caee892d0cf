import type { KindReason } from "../../src/runtime/conditions.js";

/**
 * A reason for the runtime's own tests. The runtime knows no kind, so these tests have no reason
 * table to take one from; targets and their tests use the tables in src/apis.
 */
export const testReason = (value: string): KindReason => value as KindReason;
