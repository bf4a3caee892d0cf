/**
 * Value checks shared by the OpenBao offline validators: versions, quantities, durations, DNS names.
 * Kept free of the TypeBox schemas so `validate` and the controllers can use them without loading
 * every kind's schema; the unit tests hold the patterns to the schema's.
 */

/** Same as the CRD's pattern on spec.version (see SEMVER_PATTERN in src/apis/openbaocluster.ts). */
export const VERSION_PATTERN =
  "^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$";
const VERSION = new RegExp(VERSION_PATTERN);

export interface Version {
  major: number;
  minor: number;
  patch: number;
  /** What follows the patch number, e.g. `-rc.1` or `+build`; empty for a release. */
  rest: string;
}

/** A semantic version, with or without a leading v; undefined when it is not one. */
export function parseVersion(text: string): Version | undefined {
  if (!VERSION.test(text)) return undefined;
  const m = /^v?(\d+)\.(\d+)\.(\d+)(.*)$/.exec(text)!;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), rest: m[4]! };
}

export const sameVersion = (a: Version, b: Version): boolean =>
  a.major === b.major && a.minor === b.minor && a.patch === b.patch && a.rest === b.rest;

export { parseQuantity, QUANTITY_PATTERN } from "../../../runtime/quantity.js";

/** Same as DURATION_PATTERN in src/apis/common.ts: Go's units plus days. */
export const DURATION_PATTERN = "^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h|d))+$";
const DURATION = new RegExp(DURATION_PATTERN);
export const isDuration = (text: string): boolean => DURATION.test(text);

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A Kubernetes object name such as a Secret's: a DNS subdomain of at most 253 characters. */
export const isObjectName = (text: string): boolean => text.length <= 253 && DNS_SUBDOMAIN.test(text);

// A host name a certificate can be issued for: labels of letters, digits and hyphens, optionally one
// leading wildcard label.
const HOST =
  /^(\*\.)?([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*$/;
export const isHostName = (text: string): boolean => text.length <= 253 && HOST.test(text);
