/**
 * UTC timestamps without Date's string methods. On Node's ICU builds, `toISOString`, `toUTCString`
 * and `toString` compute the local time zone before formatting even when the text is UTC, and the
 * first call opens ICU's time zone data: about 1 MiB of the node binary becomes resident (ICU code
 * and data pages, measured by pagemap on Node 24) for a process that never needed a time zone. The
 * getUTC* accessors touch none of it. Same text as the Date methods for years 0–9999; other years
 * (never a Kubernetes timestamp) fall back to them.
 */

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);
const four = (n: number): string => (n < 10 ? `000${n}` : n < 100 ? `00${n}` : n < 1000 ? `0${n}` : `${n}`);

function dateOf(t: Date | number): Date {
  const d = typeof t === "number" ? new Date(t) : t;
  // The same error toISOString throws, so callers see no difference on an invalid time.
  if (Number.isNaN(d.getTime())) throw new RangeError("Invalid time value");
  return d;
}

/** `YYYY-MM-DDTHH:MM:SS` of `d` in UTC, or undefined outside years 0–9999. */
function secondsPart(d: Date): string | undefined {
  const y = d.getUTCFullYear();
  if (y < 0 || y > 9999) return undefined;
  return `${four(y)}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}T${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

/** What `toISOString` returns: `2026-12-07T06:41:17.123Z`. */
export function isoTime(t: Date | number): string {
  const d = dateOf(t);
  const s = secondsPart(d);
  return s === undefined ? d.toISOString() : `${s}.${three(d.getUTCMilliseconds())}Z`;
}

/** Whole seconds, as Kubernetes writes a metav1.Time: `2026-12-07T06:41:17Z`. */
export function isoSeconds(t: Date | number): string {
  const d = dateOf(t);
  const s = secondsPart(d);
  return s === undefined ? d.toISOString().replace(/\.\d+Z$/, "Z") : `${s}Z`;
}

/** Microseconds, as Kubernetes writes a metav1.MicroTime (milliseconds and three zeros). */
export function isoMicros(t: Date | number): string {
  return isoTime(t).replace("Z", "000Z");
}

/** An HTTP date (IMF-fixdate, RFC 9110), what `toUTCString` returns: `Mon, 07 Dec 2026 06:41:17 GMT`. */
export function httpDate(t: Date | number): string {
  const d = dateOf(t);
  const y = d.getUTCFullYear();
  if (y < 0 || y > 9999) return d.toUTCString();
  return `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${four(y)} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} GMT`;
}
