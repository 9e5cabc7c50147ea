/**
 * The statement record's rule (docs/architecture.md, "Where is the test for this file?"), pure over
 * what a run recorded (test/support/statement-recorder.mjs, runtime/blobs/recorded-store.ts):
 * - every SQL statement the service's code (a runtime/ or generated/ file on its stack) ran on
 *   SQLite ran on PostgreSQL too, compared without parameters;
 * - a statement written for one engine on purpose is paired by the file that issues it (the
 *   innermost runtime file on its stack past the storage layer's runners, RUNNERS), never waived
 *   one by one:
 *   - a file named for SQLite (`sqlite` a dash-separated word of its name: accept-sqlite.ts),
 *     issuing it or calling the file that does, covers it when its PostgreSQL counterpart (the
 *     same name with `postgres` or `pg`) ran a statement on PostgreSQL, or when it has none (that
 *     engine's own machinery: sqlite-group-commit.ts's SAVEPOINTs);
 *   - any other file is covered when it issued, on PostgreSQL, statements that never ran on
 *     SQLite: it speaks each engine in its own words (a dialect branch, a migration's DDL, Kysely's
 *     migrator), and its PostgreSQL words ran;
 * - SQLite's connection settings (PRAGMA) have no PostgreSQL statement; transaction control is
 *   compared without SQLite's lock mode (BEGIN IMMEDIATE is BEGIN);
 * - every store operation that ran on the local store ran on the S3 store, where the S3 store has
 *   its own path for it (a method of its own).
 * A run that recorded nothing on PostgreSQL or nothing on S3 fails: the check would compare nothing.
 */

export type Recorded =
  | {
      kind: 'sql';
      engine: 'sqlite' | 'postgres';
      statement: string;
      /** The repository's files on its stack, innermost first: runtime/ and generated/, test/ and support/. */
      files: string[];
      /** The line each of `files` was at (absent in records made before lines were kept). */
      lines?: number[];
      suite?: string;
      /** The vitest project that ran it (sqlite, postgres, s3, s3-postgres). */
      project?: string;
    }
  | { kind: 'store'; store: 'local' | 'database' | 's3'; operation: string };

export interface CheckInput {
  records: Recorded[];
  /** The repository's runtime/ files (a counterpart is looked for among them). */
  sourceFiles: ReadonlySet<string>;
  /** The operations the S3 store implements itself. */
  s3Operations: ReadonlySet<string>;
}

/** The storage layer's modules that run other files' statements: the issuing file is the one that called them. */
export const RUNNERS = new Set([
  'runtime/storage/dialect.ts',
  'runtime/storage/prepared-read.ts',
  'runtime/storage/pg-direct.ts',
  'runtime/storage/executor.ts',
  'runtime/storage/write-transaction.ts',
  'runtime/storage/sqlite-group-commit.ts',
]);

/** The service's own code: a statement issued from anywhere else (a test, a loopback server) is not the service's. */
const SERVICE = /^(runtime|generated)\//;

/**
 * The file that issued a statement: the innermost file on its stack that is not a runner (else the
 * innermost runner past dialect.ts, which runs every statement). Undefined when that file is not
 * the service's: a test's own SQL through the runtime's dialect is the test's business.
 */
export function issuer(files: string[]): string | undefined {
  const file = files.find((f) => !RUNNERS.has(f)) ?? files.find((f) => f !== 'runtime/storage/dialect.ts') ?? files[0];
  return file !== undefined && SERVICE.test(file) ? file : undefined;
}

/** Where the issuer was on the stack, file:line (the file alone when no line was recorded). */
export function issuedAt(record: { files: string[]; lines?: number[] }): string | undefined {
  const file = issuer(record.files);
  if (file === undefined) return undefined;
  const line = record.lines?.[record.files.indexOf(file)];
  return line === undefined ? file : `${file}:${line}`;
}

/**
 * The statement as compared: lower case, SQLite's transaction lock mode dropped, and every IN list
 * of placeholders as one (`in (?, ?, ?)` and `in (?, ?)` are one statement with other parameters).
 */
export function comparable(statement: string): string {
  return statement
    .toLowerCase()
    .replace(/^begin (immediate|deferred|exclusive)( transaction)?$/, 'begin')
    .replace(/^begin transaction$/, 'begin')
    .replace(/\bin \(\s*\?(?:\s*,\s*\?)*\s*\)/g, 'in (?)');
}

/** A file named for SQLite: `sqlite` is a dash-separated word of its name. */
const SQLITE_NAMED = /(^|-)sqlite(-|\.ts$)/;

/** The counterparts a file named for SQLite may have (postgres and pg spellings). */
export function counterparts(file: string): string[] {
  const slash = file.lastIndexOf('/');
  const dir = file.slice(0, slash + 1);
  const base = file.slice(slash + 1);
  return ['postgres', 'pg'].map((word) => dir + base.replace(/(^|-)sqlite(?=-|\.ts$)/, `$1${word}`));
}

/** What the run shows wrong, one line each; empty when it passes. */
export function statementProblems({ records, sourceFiles, s3Operations }: CheckInput): string[] {
  const problems: string[] = [];
  const all = records.filter((r): r is Extract<Recorded, { kind: 'sql' }> => r.kind === 'sql');
  const store = records.filter((r): r is Extract<Recorded, { kind: 'store' }> => r.kind === 'store');
  // Whatever ran on PostgreSQL counts, whoever sent it; on SQLite, what the service's code sent.
  const onPostgres = new Set(all.filter((r) => r.engine === 'postgres').map((r) => comparable(r.statement)));
  const onSqlite = new Set(all.filter((r) => r.engine === 'sqlite').map((r) => comparable(r.statement)));
  const issuersOnPostgres = new Set(all.flatMap((r) => (r.engine === 'postgres' ? [issuer(r.files)] : [])));
  const ownWordsOnPostgres = new Set(
    all.flatMap((r) => (r.engine === 'postgres' && !onSqlite.has(comparable(r.statement)) ? [issuer(r.files)] : [])),
  );
  const sql = all.filter((r) => issuer(r.files) !== undefined);
  if (sql.some((r) => r.engine === 'sqlite') && onPostgres.size === 0)
    problems.push('no statement ran on PostgreSQL: the postgres project did not run (MEDIAFORGE_TEST_PG)');
  else {
    const reported = new Set<string>();
    for (const record of sql) {
      if (record.engine !== 'sqlite') continue;
      const statement = comparable(record.statement);
      if (onPostgres.has(statement) || statement.startsWith('pragma ') || reported.has(statement)) continue;
      const file = issuer(record.files)!;
      // A file named for SQLite pairs what it issues and what the files it calls issue for it.
      const sqliteNamed = [file, ...record.files.filter((f) => !RUNNERS.has(f))].filter((f) =>
        SQLITE_NAMED.test(f.slice(f.lastIndexOf('/') + 1)),
      );
      const paired =
        sqliteNamed.some((named) => {
          const partners = counterparts(named).filter((partner) => sourceFiles.has(partner));
          return partners.length === 0 || partners.some((partner) => issuersOnPostgres.has(partner));
        }) || ownWordsOnPostgres.has(file);
      if (paired) continue;
      reported.add(statement);
      const projects = [
        ...new Set(
          sql.flatMap((r) =>
            r.engine === 'sqlite' && comparable(r.statement) === statement && r.project ? [r.project] : [],
          ),
        ),
      ].sort();
      problems.push(
        `ran only on SQLite: ${record.statement.slice(0, 300)} (issued at ${issuedAt(record)}; ran on ${projects.join(', ') || 'sqlite'}, not on postgres, s3-postgres${record.suite ? `; suite ${record.suite}` : ''})`,
      );
    }
  }
  const onS3 = new Set(store.filter((r) => r.store === 's3').map((r) => r.operation));
  const onLocal = [...new Set(store.filter((r) => r.store === 'local').map((r) => r.operation))].sort();
  if (onLocal.length > 0 && onS3.size === 0) problems.push('no store operation ran on S3: the s3 projects did not run');
  else
    for (const operation of onLocal)
      if (s3Operations.has(operation) && !onS3.has(operation))
        problems.push(
          `store operation ran only on the local store: ${operation} (the S3 store has its own; not on the s3, s3-postgres projects)`,
        );
  return problems;
}
