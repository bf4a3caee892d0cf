// Kubernetes resource quantities (resource.Quantity's text form), read without any domain meaning.

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
