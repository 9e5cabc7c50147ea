import {
  CompiledQuery,
  Kysely,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  sql,
  type ColumnDefinitionBuilder,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
} from 'kysely';
import { CurrentSchemaPostgresDialect } from './pg-introspector.js';
import type { Database } from './schema.js';
import { SqliteGroupCommit } from './sqlite-group-commit.js';

/** The only place that knows which database engine is behind Kysely. */
export type Engine = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  engine: Engine;
  url: string;
  /**
   * The SQLite connection itself, for the few reads on every request that must cost microseconds
   * (runtime/accounts/key-revision.ts); the same connection Kysely uses, so it sees the same data.
   */
  sqlite?: BetterSqliteDatabase;
  /** SQLite: createTask's transactions, committed in groups (sqlite-group-commit.ts). */
  sqliteGroup?: SqliteGroupCommit;
  /** The PostgreSQL pool Kysely draws from, for the statements sent straight to node-postgres (storage/pg-direct.ts). */
  pg?: PgPool;
  /**
   * Key revocations recorded through this connection. SQLite's `PRAGMA data_version` moves only
   * for other connections' commits, so the key-revision check of this connection counts these too
   * (runtime/accounts/key-revision.ts).
   */
  keyRevocations: { recorded: number };
  close(): Promise<void>;
}

export type BetterSqliteDatabase = import('better-sqlite3').Database;
export type PgPool = import('pg').Pool;

/** Opens sqlite:PATH (embedded, WAL) or postgres://... ; sqlite::memory: for throwaway databases. */
export async function openDb(url: string): Promise<Db> {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const pg = (await import('pg')).default;
    // int8 (bigint) columns hold millisecond times and credit counts: well inside 2^53.
    pg.types.setTypeParser(20, (value: string) => Number(value));
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    const kysely = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
    return {
      kysely,
      engine: 'postgres',
      url,
      pg: pool,
      keyRevocations: { recorded: 0 },
      close: () => kysely.destroy(),
    };
  }
  if (!url.startsWith('sqlite:'))
    throw new Error(`unsupported database URL "${url}": use sqlite:PATH or postgres://...`);
  const path = url.slice('sqlite:'.length);
  const Sqlite = (await import('better-sqlite3')).default;
  const database = new Sqlite(path === ':memory:' ? ':memory:' : path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  // Savepoint journals in memory: group commit (sqlite-group-commit.ts) opens a SAVEPOINT per request
  // inside one transaction, and a journal spilled to a temporary file halved its rate (bench/README.md).
  database.pragma('temp_store = MEMORY');
  cacheStatements(database);
  const kysely = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database }) });
  return {
    kysely,
    engine: 'sqlite',
    url,
    sqlite: database,
    sqliteGroup: new SqliteGroupCommit(kysely, database),
    keyRevocations: { recorded: 0 },
    close: () => kysely.destroy(),
  };
}

/**
 * Kysely's SQLite driver calls prepare() for every query, and better-sqlite3 compiles the SQL text
 * anew each time (40 % of SQLite time under load, bench/README.md). A statement can be reused once
 * it has run, and the driver's mutex serializes use of the one connection, so keep them by text.
 */
function cacheStatements(database: { prepare(source: string): unknown }): void {
  const statements = new Map<string, unknown>();
  const prepare = database.prepare.bind(database);
  database.prepare = (source: string) => {
    let statement = statements.get(source);
    if (statement === undefined) {
      // Query texts are few (parameters are bound, not inlined); the bound only guards a leak.
      if (statements.size >= 2000) statements.clear();
      statement = prepare(source);
      statements.set(source, statement);
    }
    return statement;
  };
}

/**
 * Migrations run in one transaction (SQLite's DDL is transactional; Kysely's adapter says it is not
 * and then runs each statement on its own, with no lock). With transactions that begin IMMEDIATE,
 * the first process to migrate holds the write lock from before it reads which migrations ran to
 * its COMMIT; another process migrating the same file at once waits for it (busy_timeout), then
 * reads them all done. Without this, two processes both saw a new file empty and both created its
 * tables: `table "settings" already exists` (issue 28, item 1).
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/**
 * Transactions begin IMMEDIATE: the write lock is taken up front (waiting up to busy_timeout), so a
 * transaction that reads and then writes never fails with SQLITE_BUSY when another process's
 * connection wrote in between (a deferred BEGIN cannot upgrade a stale WAL snapshot).
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
  override createDriver(): Driver {
    return new (class extends SqliteDriver {
      override async beginTransaction(connection: DatabaseConnection): Promise<void> {
        await connection.executeQuery(CompiledQuery.raw('begin immediate'));
      }
    })(this.config);
  }
  constructor(private readonly config: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(config);
  }
}

/** An auto-incrementing integer primary key, in each engine's spelling. */
export function serialPrimaryKey(engine: Engine) {
  return engine === 'postgres'
    ? { type: sql`bigserial`, build: (c: ColumnDefinitionBuilder) => c.primaryKey() }
    : { type: sql`integer`, build: (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement() };
}

/** Integer columns: bigint on PostgreSQL (millisecond times), integer on SQLite (64-bit already). */
export function bigint(engine: Engine) {
  return engine === 'postgres' ? sql`bigint` : sql`integer`;
}

/** True when an error is a unique-constraint violation on either engine. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE';
}
