/**
 * String order for sorts the operator makes at run time, without ICU. `localeCompare` loads ICU's
 * collation code and data on first use (about 2.4 MiB of the node binary becomes resident on Node
 * 24, measured by pagemap), for strings that are nearly always ASCII names. `collate` gives the
 * order `localeCompare` gives for strings made of ASCII letters, digits and `_ - : . /`, computed
 * here; anything else goes to `localeCompare` itself. That order is ICU's root collation, the one
 * Node uses when the environment names no locale (the image sets no LANG) or an English one; a
 * process started under a locale with its own tailoring (Danish, say) sorted by that before and
 * sorts by the root order now. So orders users already see (StatefulSet environment, condition lists,
 * pods to restart) stay what they were, and a process that only sorts names never loads ICU.
 */

// Primary weights of ICU's root collation for the characters handled here: the punctuation in
// its order, then digits, then letters with case ignored (case only breaks ties, lower first).
const PUNCTUATION = "_-:./";
const weight = new Int16Array(128).fill(-1);
for (let i = 0; i < PUNCTUATION.length; i++) weight[PUNCTUATION.charCodeAt(i)] = i;
for (let d = 0; d < 10; d++) weight[48 + d] = PUNCTUATION.length + d;
for (let l = 0; l < 26; l++) {
  weight[65 + l] = PUNCTUATION.length + 10 + l;
  weight[97 + l] = PUNCTUATION.length + 10 + l;
}

function handled(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || weight[c]! < 0) return false;
  }
  return true;
}

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

/** Tertiary level: at the first difference in case only, lower case sorts first. */
function byCase(a: string, b: string): number {
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x >= 97 ? -1 : 1;
  }
  return 0;
}

/** `a.localeCompare(b)`: negative, zero or positive (here -1, 0 or 1). */
export function collate(a: string, b: string): number {
  if (a === b) return 0;
  if (!handled(a) || !handled(b)) return sign(a.localeCompare(b));
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = weight[a.charCodeAt(i)]! - weight[b.charCodeAt(i)]!;
    if (d !== 0) return sign(d);
  }
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return byCase(a, b);
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * `a.localeCompare(b, "en", { numeric: true })` for the same strings: runs of digits compare by
 * their value ("pod-2" before "pod-10"). Runs equal in value but not in text (leading zeros) are
 * left to `localeCompare`, as is anything `collate` does not handle.
 */
export function collateNumeric(a: string, b: string): number {
  if (a === b) return 0;
  if (!handled(a) || !handled(b)) return sign(a.localeCompare(b, "en", { numeric: true }));
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(j);
    if (isDigit(x) && isDigit(y)) {
      let ei = i;
      let ej = j;
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++;
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++;
      const ra = a.slice(i, ei).replace(/^0+(?=\d)/, "");
      const rb = b.slice(j, ej).replace(/^0+(?=\d)/, "");
      if (ra.length !== rb.length) return ra.length < rb.length ? -1 : 1;
      if (ra !== rb) return ra < rb ? -1 : 1;
      if (ei - i !== ej - j) return sign(a.localeCompare(b, "en", { numeric: true }));
      i = ei;
      j = ej;
      continue;
    }
    const d = weight[x]! - weight[y]!;
    if (d !== 0) return sign(d);
    i++;
    j++;
  }
  if (i < a.length || j < b.length) return i < a.length ? 1 : -1;
  return byCase(a, b);
}
