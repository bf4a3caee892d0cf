import { createReadStream, readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Descriptor } from "./node/images/archive.js";

// Copies an image from an OCI image layout into a registry with the distribution API (v2): each blob
// the registry lacks as one monolithic upload (POST for an upload URL, PUT with the digest), then the
// manifest by its digest and by a tag. Plain HTTP: the registry is the tests' own, on loopback.

interface Manifest {
  config: Descriptor;
  layers: Descriptor[];
}

/** One HTTP exchange; the request body is a buffer or a file streamed from disk. */
function exchange(
  method: string,
  url: URL,
  headers: Record<string, string | number>,
  body?: Buffer | { file: string; size: number },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.setTimeout(300_000, () =>
      req.destroy(new Error(`${method} ${url.pathname}: no answer in 5 minutes`)),
    );
    if (body === undefined) req.end();
    else if (Buffer.isBuffer(body)) req.end(body);
    else pipeline(createReadStream(body.file), req).catch(reject);
  });
}

function refused(what: string, res: { status: number; text: string }): Error {
  return new Error(`${what}: HTTP ${res.status} ${res.text.slice(0, 500)}`);
}

/** Uploads one blob unless the repository already has it. */
export async function pushBlob(
  registry: string,
  repository: string,
  digest: string,
  body: Buffer | { file: string; size: number },
): Promise<void> {
  const blobs = `/v2/${repository}/blobs`;
  const head = await exchange("HEAD", new URL(`${blobs}/${digest}`, registry), {});
  if (head.status === 200) return;
  const started = await exchange("POST", new URL(`${blobs}/uploads/`, registry), { "Content-Length": 0 });
  const location = started.headers["location"];
  if (started.status !== 202 || typeof location !== "string") throw refused(`starting ${digest}`, started);
  // The upload URL may be relative and usually carries a query (its state) already.
  const target = new URL(location, registry);
  target.searchParams.set("digest", digest);
  const size = Buffer.isBuffer(body) ? body.length : body.size;
  const put = await exchange(
    "PUT",
    target,
    { "Content-Type": "application/octet-stream", "Content-Length": size },
    body,
  );
  if (put.status !== 201) throw refused(`uploading ${digest}`, put);
}

/** Puts a manifest under `reference` (a tag or its digest) and returns the digest the registry computed. */
export async function pushManifest(
  registry: string,
  repository: string,
  reference: string,
  mediaType: string,
  bytes: Buffer,
): Promise<string> {
  const res = await exchange(
    "PUT",
    new URL(`/v2/${repository}/manifests/${reference}`, registry),
    { "Content-Type": mediaType, "Content-Length": bytes.length },
    bytes,
  );
  const digest = res.headers["docker-content-digest"];
  if (res.status !== 201 || typeof digest !== "string") throw refused(`putting manifest ${reference}`, res);
  return digest;
}

/**
 * Pushes the image manifest `digest` of the layout (its blobs first, then the manifest by digest and
 * as `tag`) to `repository` in the registry at `registry` (http://host:port).
 */
export async function pushOciLayout(
  layout: string,
  digest: string,
  registry: string,
  repository: string,
  tag: string,
): Promise<void> {
  const blob = (d: string) => join(layout, "blobs", "sha256", d.replace(/^sha256:/, ""));
  const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as { manifests: Descriptor[] };
  const entry = index.manifests.find((m) => m.digest === digest);
  if (!entry) throw new Error(`${layout}/index.json does not list ${digest}`);
  const bytes = readFileSync(blob(digest));
  const manifest = JSON.parse(bytes.toString("utf8")) as Manifest;
  for (const d of [manifest.config, ...manifest.layers]) {
    const file = blob(d.digest);
    await pushBlob(registry, repository, d.digest, { file, size: statSync(file).size });
  }
  const stored = await pushManifest(registry, repository, digest, entry.mediaType, bytes);
  if (stored !== digest) throw new Error(`the registry stored ${digest} as ${stored}`);
  await pushManifest(registry, repository, tag, entry.mediaType, bytes);
}
