/**
 * Named parameters of a statement sent straight to node-postgres (storage/pg-direct.ts): the text is
 * built from names (`ref('accountId')` is the `$n` of that name, the same n wherever it is used) and
 * the values are bound by name (`values({ accountId, ... })` lists them in the text's order). Pieces
 * of one statement written in different modules (the ledger's hold inside createTask's statement)
 * then agree on what each reference holds without agreeing on positions, so a reordering cannot
 * bind one input's value to another.
 */
export class PgParams<Name extends string> {
  readonly #order: Name[] = [];

  /** The `$n` reference of `name`, numbered on first use. */
  ref(name: Name): string {
    let index = this.#order.indexOf(name);
    if (index < 0) index = this.#order.push(name) - 1;
    return `$${index + 1}`;
  }

  /** The values in the order of the references; throws when a name the text uses has no value. */
  values(bound: Partial<Record<Name, unknown>>): unknown[] {
    return this.#order.map((name) => {
      if (bound[name] === undefined) throw new Error(`statement parameter ${name} has no value`);
      return bound[name];
    });
  }
}
