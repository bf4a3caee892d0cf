/**
 * One request to the API server as KubeClient.request takes it, and the one method discovery
 * needs, in a file of their own: the client builds its RestMapper and the mapper sends through the
 * client, so each names the other's shape here rather than importing the other.
 */
export interface RequestSpec {
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** The request fails when its connection or stream stays silent this long (default 30 s). */
  idleTimeoutMs?: number;
  /**
   * The whole exchange, answer and body, must end within this (default 90 s; watches have none, the
   * idle timeout and bookmarks guard them). A caller's signal can only make it shorter.
   */
  deadlineMs?: number;
  accept?: string;
  /** Retries of an answer with Retry-After, instead of the client's own number. */
  maxRetries?: number;
  /** Aborts the request wherever it is (waiting for the answer or reading it). */
  signal?: AbortSignal;
}

/** What can send an API request: KubeClient, as the RestMapper sees it. */
export interface ApiRequester {
  request<T = unknown>(spec: RequestSpec): Promise<T>;
}
