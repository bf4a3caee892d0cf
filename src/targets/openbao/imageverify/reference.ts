import { parseImage } from "../validate/image.js";

/** An image reference split the way the distribution API addresses it. */
export interface RegistryReference {
  /** Host (and port) the API is served on: `registry-1.docker.io` for Docker Hub. */
  host: string;
  /** Repository inside the registry: `library/alpine` for `alpine`. */
  repository: string;
  tag?: string;
  digest?: string;
  /** The reference as written, without tag or digest: what a pinned reference keeps. */
  name: string;
}

// Docker's rule: a first path component is a registry when it has a dot or a port, or is localhost.
const isRegistryPart = (part: string): boolean =>
  part.includes(".") || part.includes(":") || part === "localhost" || part.startsWith("[");

/** Parses an image reference; a string naming the problem when it is none. */
export function registryReference(image: string): RegistryReference | string {
  const parsed = parseImage(image);
  if (typeof parsed === "string") return parsed;
  const slash = parsed.name.indexOf("/");
  const first = slash < 0 ? "" : parsed.name.slice(0, slash);
  let host: string;
  let repository: string;
  if (first && isRegistryPart(first)) {
    host = first;
    repository = parsed.name.slice(slash + 1);
  } else {
    host = "docker.io";
    repository = parsed.name;
  }
  // Docker Hub's names are an alias: the API lives on registry-1 and single names sit under library/.
  if (host === "docker.io" || host === "index.docker.io") {
    host = "registry-1.docker.io";
    if (!repository.includes("/")) repository = `library/${repository}`;
  }
  return {
    host,
    repository,
    name: parsed.name,
    ...(parsed.tag === undefined ? {} : { tag: parsed.tag }),
    ...(parsed.digest === undefined ? {} : { digest: parsed.digest }),
  };
}

/**
 * Whether the registry is spoken to over plain HTTP: only on loopback, as Docker and containerd
 * treat 127.0.0.0/8 as an insecure registry by default. Anything else is HTTPS.
 */
export function plainHttp(host: string): boolean {
  const bare = host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.replace(/:\d+$/, "");
  return bare === "localhost" || bare === "::1" || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/** `name@digest`: the reference a verified image is pinned to (no tag, so nothing can move it). */
export function pinnedReference(ref: RegistryReference, digest: string): string {
  return `${ref.name}@${digest}`;
}

/** The tag cosign stores an image's signature under: `sha256-<hex>.sig`. */
export function signatureTag(digest: string): string {
  return `${digest.replace(":", "-")}.sig`;
}
