/**
 * What upstream 0.5's CRD refuses and this schema still admits, because manifests written before
 * 0.5 (upstream's own samples among them) leave the value out: each is named at admission as a
 * warning, so a user learns that the manifest would not apply to upstream as it is.
 *
 * Pure and schema-free: the input may be any JSON.
 */

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const at = (o: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), o);
const filled = (v: unknown) => typeof v === "string" && v !== "";

/** One warning per value upstream 0.5 would refuse; empty for a manifest it admits. */
export function upstreamRefusals(spec: unknown): string[] {
  if (!isObject(spec)) return [];
  const out: string[] = [];
  const servingPods =
    (typeof spec["replicas"] === "number" ? spec["replicas"] : 3) > 1 ||
    at(spec, "upgrade", "strategy") === "BlueGreen";
  if (
    at(spec, "tls", "mode") === "ACME" &&
    servingPods &&
    at(spec, "tls", "acme", "sharedCache") === undefined
  )
    out.push(
      "spec.tls.acme.sharedCache: upstream 0.5 requires it when more than one pod serves ACME (replicas > 1 or BlueGreen); without it each pod keeps its own ACME cache and orders its own certificate",
    );
  const target = (path: string, t: unknown) => {
    if (isObject(t) && (t["provider"] ?? "s3") === "s3" && !filled(t["endpoint"]))
      out.push(
        `${path}.endpoint: upstream 0.5 requires it for provider s3; without it the region's AWS endpoint is used`,
      );
  };
  target("spec.backup.target", at(spec, "backup", "target"));
  target("spec.source.target", at(spec, "source", "target"));
  const pkcs11 = at(spec, "unseal", "pkcs11");
  if (
    at(spec, "unseal", "type") === "pkcs11" &&
    isObject(pkcs11) &&
    !filled(pkcs11["slot"]) &&
    !filled(pkcs11["tokenLabel"])
  )
    out.push(
      "spec.unseal.pkcs11: upstream 0.5 requires slot or tokenLabel; without either the library chooses the token",
    );
  return out;
}
