/**
 * GitLabSecrets' names and the constants its reconciler uses, without the schema (see
 * `gitlabcore-names.ts`); `gitlabsecrets.ts` re-exports all of it.
 */
import { reasonTable } from "./reason.js";

export {
  GitLabCoreGroup as GitLabSecretsGroup,
  GitLabCoreVersion as GitLabSecretsVersion,
} from "./gitlabcore-names.js";

export const GitLabSecretsKind = "GitLabSecrets";
export const GitLabSecretsPlural = "gitlabsecrets";

/** The only policy GitLab's chart emits: create what is missing, never touch a value that exists. */
export const GitLabSecretsPolicies = ["fill-missing"] as const;

/** Every generator type the chart renders (its secrets manifest); the definition accepts each. */
export const GeneratorTypes = [
  "random",
  "bytes",
  "static",
  "rsa",
  "x509",
  "sshHostKeys",
  "railsSecrets",
] as const;
export type GeneratorType = (typeof GeneratorTypes)[number];

/** The generator types this reconciler produces; the others are refused by name in the Ready condition. */
export const ImplementedGeneratorTypes: readonly GeneratorType[] = [
  "random",
  "bytes",
  "static",
  "rsa",
  "x509",
  "sshHostKeys",
  "railsSecrets",
];

export const RandomCharsets = ["alphanumeric", "hex", "lowerAlphanumeric"] as const;
export type RandomCharset = (typeof RandomCharsets)[number];
export const RandomEncodings = ["none", "base64", "base64-nowrap"] as const;
export const RandomWraps = ["none", "jsonArray"] as const;
export const BytesEncodings = ["raw", "base64"] as const;
export const RailsFieldShapes = ["scalar", "pem", "list"] as const;
/** ed25519 is left out on purpose: the definition refuses it, as GitLab's does. */
export const CertificateAlgorithms = ["rsa", "ecdsa"] as const;

export const GitLabSecretsCondition = {
  Ready: "Ready",
} as const;
export type GitLabSecretsConditionType = (typeof GitLabSecretsCondition)[keyof typeof GitLabSecretsCondition];

export const GitLabSecretsReason = reasonTable<typeof GitLabSecretsKind>()({
  /** Every declared Secret holds every declared key. */
  SecretsReady: "SecretsReady",
  /** A generator type this operator does not produce (none of the chart's today). */
  GeneratorNotImplemented: "GeneratorNotImplemented",
  /**
   * A unit left as it is: a partial pair nothing can be derived from, a data-bearing unit recorded
   * ready that is gone, a secrets.yml that does not parse. The message names each, never a value.
   */
  SecretsReported: "SecretsReported",
  /** The spec cannot be acted on (a field the definition would refuse); the message names it. */
  InvalidSpec: "InvalidSpec",
  /** Reading or writing a Secret failed; retried with backoff. */
  SecretWriteFailed: "SecretWriteFailed",
  /** The target runs observe-only: what is missing is reported, not written. */
  ObserveOnly: "ObserveOnly",
  /** A Secret was created, or keys were added to one (an event). */
  SecretsGenerated: "SecretsGenerated",
});
export type GitLabSecretsReasonType = (typeof GitLabSecretsReason)[keyof typeof GitLabSecretsReason];

/** The controller and the field manager that write GitLabSecrets status and the Secrets. */
export const GitLabSecretsManagers = {
  controller: "gitlabsecrets",
  fieldManager: "gitlabsecrets-controller",
} as const;
