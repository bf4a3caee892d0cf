/** Why the backend said no, in the terms the conditions use. Messages never carry a value. */
export type BackendFailure = "forbidden" | "unavailable" | "conflict" | "invalid" | "no-mount" | "error";

export class BackendError extends Error {
  constructor(
    readonly failure: BackendFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "BackendError";
  }
}

export const isCasConflict = (e: unknown): boolean => e instanceof BackendError && e.failure === "conflict";
export const isForbiddenError = (e: unknown): boolean =>
  e instanceof BackendError && e.failure === "forbidden";
export const isUnavailable = (e: unknown): boolean =>
  e instanceof BackendError && e.failure === "unavailable";
