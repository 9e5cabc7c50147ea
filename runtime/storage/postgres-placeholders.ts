/**
 * A fixed statement written once in SQLite's spelling (`?` placeholders, no `?` elsewhere), numbered
 * for PostgreSQL (`$1`, `$2`…): the prepared reads and writes (prepared-read.ts, prepared-write.ts)
 * and the ledger's reads on createTask's own PostgreSQL connection keep one text for both engines.
 */
export function postgresPlaceholders(sqliteText: string): string {
  let n = 0;
  return sqliteText.replace(/\?/g, () => `$${++n}`);
}
