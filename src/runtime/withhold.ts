/**
 * The API server quotes the offending value in its field errors (`data.x: Invalid value: "…": …`):
 * for a ConfigMap, a Job's env or a custom resource that value may be anything the object held,
 * and the message travels on into logs, events and status conditions. These helpers keep the field
 * path and the reason and withhold the value, for every kind alike.
 */

export const WITHHELD = "[value withheld]";

// The reasons Kubernetes' field errors print a value after (k8s.io/apimachinery field.ErrorType).
const WITH_VALUE = /\b(Invalid value|Unsupported value|Duplicate value|Not found): /g;
const QUOTED = /^"(?:[^"\\]|\\.)*"/;
// How Go prints a value that is not a string: a number, a boolean, nil, a map, a slice or a struct.
const GO_VALUE = /^(?:-?\d|true\b|false\b|null\b|nil\b|<nil>|map\[|\[|\{|[\w.]+\{)/;

/**
 * `message` with the value after each `Invalid value:`, `Unsupported value:`, `Duplicate value:`
 * and `Not found:` replaced by {@link WITHHELD}. A quoted value ends at its closing quote; any
 * other (a number, a Go-printed map or list) at the next `": "` that starts the detail, or at the
 * end of the line. The lists of allowed values that follow are the schema's, not the object's, and
 * stay.
 */
export function withholdValues(message: string): string {
  let out = "";
  let from = 0;
  WITH_VALUE.lastIndex = 0;
  for (let m = WITH_VALUE.exec(message); m !== null; m = WITH_VALUE.exec(message)) {
    const start = m.index + m[0].length;
    if (start < from) continue;
    const rest = message.slice(start);
    const quoted = QUOTED.exec(rest);
    let end: number;
    if (quoted) end = start + quoted[0].length;
    else if (isRuleMessage(rest)) {
      // No value at all: the API server omits it for CEL rules (`Invalid value: <rule message>`),
      // and what follows is the schema's own message, which names the problem.
      continue;
    } else {
      const detail = rest.search(/: |\n/);
      end = detail < 0 ? message.length : start + detail;
    }
    out += message.slice(from, start) + WITHHELD;
    from = end;
    WITH_VALUE.lastIndex = end;
  }
  return out + message.slice(from);
}

/**
 * Whether the text after "Invalid value: " is no value at all. apimachinery's field errors print a
 * string quoted, numbers, booleans, nil and composite values the way Go does (GO_VALUE), and a
 * fmt.Stringer (a quantity, a type) bare; a CEL rule's error omits the value and goes straight to
 * the rule's message. So what is neither quoted nor a Go value is a message or a Stringer, and
 * neither carries the object's data.
 */
function isRuleMessage(rest: string): boolean {
  return !GO_VALUE.test(rest.split("\n", 1)[0]!);
}

/** A Status's `details` with each cause's message withheld the same way; field and reason stay. */
export function withholdDetails(details: unknown): unknown {
  if (!details || typeof details !== "object") return details;
  const d = details as { causes?: unknown };
  if (!Array.isArray(d.causes)) return details;
  return {
    ...d,
    causes: d.causes.map((c) =>
      c && typeof c === "object" && typeof (c as { message?: unknown }).message === "string"
        ? { ...c, message: withholdValues((c as { message: string }).message) }
        : c,
    ),
  };
}
