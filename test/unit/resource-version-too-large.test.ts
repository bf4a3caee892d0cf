import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ApiError, isResourceVersionTooLarge } from "../../src/runtime/errors.js";

describe("isResourceVersionTooLarge", () => {
  it("recognises the API server's Status by its cause, as a list or watch answer carries it", () => {
    const e = new ApiError(504, "Timeout", "Too large resource version: 1000000123, current: 123", {
      causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
      retryAfterSeconds: 1,
    });
    assert.equal(isResourceVersionTooLarge(e), true);
  });

  it("recognises it by its message when an ERROR watch event dropped the details", () => {
    assert.equal(
      isResourceVersionTooLarge(new ApiError(504, "Timeout", "Too large resource version: 5, current: 4")),
      true,
    );
  });

  it("leaves other timeouts and other codes alone", () => {
    assert.equal(
      isResourceVersionTooLarge(new ApiError(504, "Timeout", "request did not complete within 60s")),
      false,
    );
    assert.equal(
      isResourceVersionTooLarge(new ApiError(410, "Expired", "too old resource version: 1 (2)")),
      false,
    );
    assert.equal(isResourceVersionTooLarge(new Error("Too large resource version")), false);
  });
});
