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

/** Same as QUANTITY_PATTERN in src/apis/common.ts: resource.Quantity's text form. */
export const QUANTITY_PATTERN =
  "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";
const QUANTITY = new RegExp(QUANTITY_PATTERN);

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The value of a quantity (bytes for a size), or undefined when the text is not a quantity. */
export function parseQuantity(text: string): number | undefined {
  if (!QUANTITY.test(text)) return undefined;
  const m = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$/.exec(text)!;
  const number = Number(m[1]);
  const suffix = m[2]!;
  if (/^[eE]/.test(suffix)) return number * 10 ** Number(suffix.slice(1));
  const scale = BINARY[suffix] ?? DECIMAL[suffix];
  return scale === undefined ? undefined : number * scale;
}

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
