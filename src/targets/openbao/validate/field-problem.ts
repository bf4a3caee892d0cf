/** One problem of a spec: where (a dotted path from the object's root) and what is wrong. */
export interface FieldProblem {
  /** Dotted path from the object's root, e.g. `spec.tls.acme.domain`. */
  field: string;
  message: string;
}
