/**
 * Container image references, as far as an offline check can judge them: well formed, and when the
 * tag names a version, the same version as spec.version (an image that silently runs another version
 * than the one the status and upgrades reason about is the mistake this catches).
 */
import { parseVersion, sameVersion, type Version } from "./values.js";

export interface ImageReference {
  /** Registry and repository, e.g. `quay.io/openbao/openbao`. */
  name: string;
  tag?: string;
  digest?: string;
}

// The grammar of the distribution reference, reduced to what tells a reference from a mistake.
const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const DOMAIN =
  "(?:[A-Za-z0-9](?:[-A-Za-z0-9]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[-A-Za-z0-9]*[A-Za-z0-9])?)*(?::[0-9]+)?|\\[[0-9a-fA-F:]+\\](?::[0-9]+)?)";
const NAME = new RegExp(`^(?:${DOMAIN}/)?${COMPONENT}(?:/${COMPONENT})*$`);
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}$/;
const SHA256 = /^sha256:[0-9a-f]{64}$/;

/** Parses `name[:tag][@digest]`; a string naming the problem when it is not a reference. */
export function parseImage(text: string): ImageReference | string {
  if (text.trim() !== text || text === "") return "must be an image reference without spaces";
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return `digest "${digest}" is not algorithm:hex`;
    if (digest.startsWith("sha256:") && !SHA256.test(digest))
      return `digest "${digest}" is not a sha256 digest (64 lowercase hexadecimal digits)`;
  }
  let tag: string | undefined;
  // A colon after the last slash separates the tag; one before it belongs to a registry port.
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return `tag "${tag}" is not a valid tag`;
  }
  if (!NAME.test(rest)) return `"${rest}" is not a valid repository name (lowercase, no spaces)`;
  return { name: rest, ...(tag === undefined ? {} : { tag }), ...(digest === undefined ? {} : { digest }) };
}

/** The version a tag names, when it starts with one (`2.4.1`, `v2.4.1`, `2.4.1-ubi`); else undefined. */
export function tagVersion(tag: string): Version | undefined {
  const m = /^(v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(tag);
  if (m) {
    // `2.4.1-ubi` is a flavour of 2.4.1, `2.4.1-rc.1` a pre-release of it: keep a pre-release only
    // when it looks like one.
    const whole = parseVersion(m[1]!);
    if (whole && (whole.rest === "" || /^-(alpha|beta|rc|pre)/i.test(whole.rest))) return whole;
    const base = /^v?\d+\.\d+\.\d+/.exec(tag)![0];
    return parseVersion(base);
  }
  return undefined;
}

/** What is wrong with `image`, checked against spec.version when given; undefined when nothing. */
export function imageProblem(image: string, version?: string): string | undefined {
  const parsed = parseImage(image);
  if (typeof parsed === "string") return parsed;
  const wanted = version === undefined ? undefined : parseVersion(version);
  if (parsed.tag !== undefined && wanted !== undefined) {
    const tagged = tagVersion(parsed.tag);
    if (tagged !== undefined && !sameVersion(tagged, wanted))
      return `tag ${parsed.tag} is another version than spec.version ${version}`;
  }
  return undefined;
}
