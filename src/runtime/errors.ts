/** Kubernetes `Status` failure carried as an error, so callers can branch on the HTTP code and reason. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.code === 404;
export const isConflict = (e: unknown): boolean => e instanceof ApiError && e.code === 409;
export const isGone = (e: unknown): boolean => e instanceof ApiError && e.code === 410;
export const isForbidden = (e: unknown): boolean => e instanceof ApiError && e.code === 403;
export const isInvalid = (e: unknown): boolean => e instanceof ApiError && e.code === 422;

/**
 * The API server is behind the resourceVersion asked for (e.g. another replica's watch cache, or
 * etcd restored from a backup): a 504 whose cause is ResourceVersionTooLarge. Retrying with the
 * same version cannot help; only a fresh list can.
 */
export function isResourceVersionTooLarge(e: unknown): boolean {
  if (!(e instanceof ApiError) || e.code !== 504) return false;
  const causes = (e.details as { causes?: { reason?: string }[] } | undefined)?.causes ?? [];
  return (
    causes.some((c) => c.reason === "ResourceVersionTooLarge") ||
    /too large resource version/i.test(e.message)
  );
}

/** A message safe for logs: the error's own text, never the body of the request that caused it. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
