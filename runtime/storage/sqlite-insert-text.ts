/** Statement texts for the statements run straight on better-sqlite3 (createTask's: storage/sqlite-group-commit.ts). */

/** `insert into "table" ("a", "b") values (?, ?), (?, ?)`: `rows` rows of `columns`. */
export function sqliteInsertText(table: string, columns: readonly string[], rows = 1): string {
  const row = `(${columns.map(() => '?').join(', ')})`;
  return `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array(rows).fill(row).join(', ')}`;
}
