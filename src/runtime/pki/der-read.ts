/** Just enough DER reading to walk a certificate's top-level structure. Pure. */

export interface Element {
  tag: number;
  /** Offset of the tag byte. */
  start: number;
  contentStart: number;
  end: number;
}

function element(buf: Buffer, at: number): Element {
  if (at + 2 > buf.length) throw new Error("DER: truncated element");
  const tag = buf[at]!;
  let len = buf[at + 1]!;
  let contentStart = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || contentStart + n > buf.length) throw new Error("DER: bad length");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[contentStart + i]!;
    contentStart += n;
  }
  const end = contentStart + len;
  if (end > buf.length) throw new Error("DER: element runs past the end");
  return { tag, start: at, contentStart, end };
}

/** The elements one after another in buf[from, to): the children of a constructed element. */
export function children(buf: Buffer, from: number, to = buf.length): Element[] {
  const out: Element[] = [];
  for (let at = from; at < to; ) {
    const e = element(buf, at);
    out.push(e);
    at = e.end;
  }
  return out;
}
