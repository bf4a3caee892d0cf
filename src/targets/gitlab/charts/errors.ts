import { GitLabCoreReason } from "../../../apis/gitlabcore-names.js";

/** A chart could not be pulled or verified; the condition reason is ChartPullFailed. */
export class ChartPullError extends Error {
  readonly reason = GitLabCoreReason.ChartPullFailed;
  constructor(message: string) {
    super(message);
    this.name = "ChartPullError";
  }
}

/** Neither the charts directory nor (when allowed) the repository has the version. */
export class ChartNotFoundError extends Error {
  constructor(
    readonly version: string,
    message: string,
  ) {
    super(message);
    this.name = "ChartNotFoundError";
  }
}

/** A reconciler setting in the environment is malformed; names the variable. */
export class ChartSourceConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = "ChartSourceConfigError";
  }
}
