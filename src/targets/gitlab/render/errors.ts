import { GitLabCoreReason } from "../../../apis/gitlabcore-names.js";

/** Why a render failed, safe to show: secret values are redacted before it is built. */
export class RenderError extends Error {
  readonly reason = GitLabCoreReason.RenderFailed;
  constructor(
    message: string,
    /** The values path helm's schema check named first, when the failure is a schema violation. */
    readonly field?: string,
    /** Every values path the schema check named. */
    readonly fields: readonly string[] = field ? [field] : [],
  ) {
    super(message);
    this.name = "RenderError";
  }
}
