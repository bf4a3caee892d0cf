import { createHash, type Hash } from "node:crypto";
import { closeSync, openSync, readSync, writeSync } from "node:fs";

// A minimal ustar writer (with PAX headers for long names): enough for image layers and archives,
// and no dependency for a format this small.

export type TarEntry =
  | { type: "dir"; path: string; mode: number; uid?: number; gid?: number }
  | { type: "symlink"; path: string; target: string }
  | { type: "file"; path: string; mode: number; uid?: number; gid?: number; data: Buffer }
  | { type: "file"; path: string; mode: number; uid?: number; gid?: number; source: string; size: number };

const BLOCK = 512;
// A fixed time keeps layers byte-for-byte reproducible, so equal inputs give equal digests.
const MTIME = 0;

export class TarWriter {
  private readonly fd: number;
  private readonly hash: Hash = createHash("sha256");
  private size = 0;

  constructor(path: string) {
    this.fd = openSync(path, "w");
  }

  add(entry: TarEntry): void {
    const path = entry.type === "dir" ? `${entry.path.replace(/\/+$/, "")}/` : entry.path;
    const name = path.replace(/^\/+/, "");
    const size = entry.type === "file" ? ("data" in entry ? entry.data.length : entry.size) : 0;
    const linkname = entry.type === "symlink" ? entry.target : "";
    if (Buffer.byteLength(name) > 100 || Buffer.byteLength(linkname) > 100) {
      const records: string[] = [];
      if (Buffer.byteLength(name) > 100) records.push(paxRecord("path", name));
      if (Buffer.byteLength(linkname) > 100) records.push(paxRecord("linkpath", linkname));
      const body = Buffer.from(records.join(""), "utf8");
      this.write(header({ name: "PaxHeader", mode: 0o644, size: body.length, type: "x", linkname: "" }));
      this.writePadded(body);
    }
    const mode = entry.type === "symlink" ? 0o777 : entry.mode;
    const type = entry.type === "dir" ? "5" : entry.type === "symlink" ? "2" : "0";
    const uid = entry.type === "symlink" ? 0 : (entry.uid ?? 0);
    const gid = entry.type === "symlink" ? 0 : (entry.gid ?? 0);
    this.write(
      header({ name: name.slice(0, 100), mode, size, type, linkname: linkname.slice(0, 100), uid, gid }),
    );
    if (entry.type !== "file") return;
    if ("data" in entry) {
      this.writePadded(entry.data);
      return;
    }
    const src = openSync(entry.source, "r");
    try {
      const chunk = Buffer.alloc(1 << 20);
      let copied = 0;
      while (copied < size) {
        const n = readSync(src, chunk, 0, Math.min(chunk.length, size - copied), copied);
        if (n === 0) throw new Error(`${entry.source} shrank while being archived`);
        this.write(chunk.subarray(0, n));
        copied += n;
      }
    } finally {
      closeSync(src);
    }
    this.pad(size);
  }

  /** Ends the archive; returns the sha256 (hex) and size of everything written. */
  finish(): { sha256: string; size: number } {
    this.write(Buffer.alloc(BLOCK * 2));
    closeSync(this.fd);
    return { sha256: this.hash.digest("hex"), size: this.size };
  }

  private write(buf: Buffer): void {
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    this.hash.update(buf);
    this.size += buf.length;
  }

  private writePadded(buf: Buffer): void {
    this.write(buf);
    this.pad(buf.length);
  }

  private pad(size: number): void {
    const rest = size % BLOCK;
    if (rest !== 0) this.write(Buffer.alloc(BLOCK - rest));
  }
}

// "<length> key=value\n", where the length counts itself.
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len)
    len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

function header(h: {
  name: string;
  mode: number;
  size: number;
  type: string;
  linkname: string;
  uid?: number;
  gid?: number;
}): Buffer {
  const buf = Buffer.alloc(BLOCK);
  const octal = (value: number, width: number) => value.toString(8).padStart(width - 1, "0");
  buf.write(h.name, 0, 100, "utf8");
  buf.write(octal(h.mode & 0o7777, 8), 100, "ascii");
  buf.write(octal(h.uid ?? 0, 8), 108, "ascii");
  buf.write(octal(h.gid ?? 0, 8), 116, "ascii");
  buf.write(octal(h.size, 12), 124, "ascii");
  buf.write(octal(MTIME, 12), 136, "ascii");
  buf.write("        ", 148, "ascii"); // checksum is computed with this field as spaces
  buf.write(h.type, 156, "ascii");
  buf.write(h.linkname, 157, 100, "utf8");
  buf.write("ustar\u000000", 257, "binary");
  let sum = 0;
  for (const byte of buf) sum += byte;
  buf.write(`${octal(sum, 7)}\u0000 `, 148, "ascii");
  return buf;
}
