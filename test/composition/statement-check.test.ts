import { describe, expect, it } from 'vitest';
import { type CheckInput, type Recorded, statementProblems } from '../support/statement-check.js';

const sql = (
  engine: 'sqlite' | 'postgres',
  statement: string,
  ...files: string[]
): Extract<Recorded, { kind: 'sql' }> => ({
  kind: 'sql',
  engine,
  statement,
  files,
});
const store = (kind: 'local' | 's3', operation: string): Recorded => ({ kind: 'store', store: kind, operation });
const SOURCES = new Set([
  'runtime/tasks/accept-sqlite.ts',
  'runtime/tasks/accept-postgres.ts',
  'runtime/storage/sqlite-checkpoints.ts',
  'runtime/storage/sqlite-group-commit.ts',
  'runtime/ledger/hold-sqlite.ts',
  'runtime/ledger/hold-pg.ts',
  'runtime/ledger/ledger.ts',
]);
const BASE = [sql('postgres', 'select 1', 'runtime/http/other.ts'), store('local', 'put'), store('s3', 'put')];
const input = (records: Recorded[]): CheckInput => ({
  records: [...BASE, ...records],
  sourceFiles: SOURCES,
  s3Operations: new Set(['put', 'read', 'presignGet']),
});

/** The statement record's rule (docs/architecture.md): table rows, several of which must fail. */
describe('the statement check', () => {
  it.each<[string, { given: Recorded[]; want: string[] }]>([
    [
      'a statement on both engines, placeholders already stripped',
      {
        given: [
          sql('sqlite', 'select * from "tasks" where "id" = ?', 'runtime/ledger/ledger.ts'),
          sql('postgres', 'select * from "tasks" where "id" = ?', 'runtime/ledger/ledger.ts'),
        ],
        want: [],
      },
    ],
    [
      'FAILS: a statement of the service only on SQLite',
      {
        given: [sql('sqlite', 'delete from "holds" where "id" = ?', 'runtime/ledger/ledger.ts')],
        want: [
          'ran only on SQLite: delete from "holds" where "id" = ? (issued at runtime/ledger/ledger.ts; ran on sqlite, not on postgres, s3-postgres)',
        ],
      },
    ],
    [
      'a file with words of its own on PostgreSQL (a dialect branch) covers its SQLite-only ones; the runner is not the issuer',
      {
        given: [
          sql(
            'sqlite',
            'SELECT value FROM settings WHERE key = ?',
            'runtime/storage/dialect.ts',
            'runtime/accounts/key-revision.ts',
          ),
          sql(
            'postgres',
            'SELECT (SELECT value FROM settings WHERE key = ?) AS revision',
            'runtime/storage/prepared-read.ts',
            'runtime/accounts/key-revision.ts',
          ),
        ],
        want: [],
      },
    ],
    [
      'FAILS: a file whose PostgreSQL statements all ran on SQLite too has no dialect branch to pair with',
      {
        given: [
          sql('sqlite', 'select 2', 'runtime/storage/dialect.ts', 'runtime/accounts/key-revision.ts'),
          sql('sqlite', 'select 3', 'runtime/accounts/key-revision.ts'),
          sql('postgres', 'select 3', 'runtime/accounts/key-revision.ts'),
        ],
        want: [
          'ran only on SQLite: select 2 (issued at runtime/accounts/key-revision.ts; ran on sqlite, not on postgres, s3-postgres)',
        ],
      },
    ],
    [
      'a SQLite-named caller pairs what the files it calls issue for it',
      {
        given: [
          sql(
            'sqlite',
            'insert into "work_items" values (?), (?)',
            'runtime/queue/schedule-work-direct.ts',
            'runtime/tasks/accept-sqlite.ts',
          ),
          sql('postgres', 'with accepted as (select 1) select 1', 'runtime/tasks/accept-postgres.ts'),
        ],
        want: [],
      },
    ],
    [
      "a runner named for SQLite with no counterpart (the commit group) is SQLite's own machinery",
      {
        given: [
          sql('sqlite', 'SAVEPOINT request', 'runtime/storage/dialect.ts', 'runtime/storage/sqlite-group-commit.ts'),
        ],
        want: [],
      },
    ],
    [
      "a statement only a test issued (no runtime file on its stack) is the test's business",
      { given: [sql('sqlite', 'update "tasks" set "state" = ?')], want: [] },
    ],
    [
      "a test's own SQL through the runtime's dialect is the test's business, not the dialect's",
      {
        given: [sql('sqlite', 'update "tasks" set "state" = ?', 'runtime/storage/dialect.ts', 'test/ops/ops.test.ts')],
        want: [],
      },
    ],
    [
      'FAILS: the runtime file that called the dialect for a test issued it, and it ran only on SQLite',
      {
        given: [
          {
            ...sql(
              'sqlite',
              'delete from "entities" where "id" = ?',
              'runtime/assets/entities.ts',
              'test/files/x.test.ts',
            ),
            lines: [41, 9],
            project: 's3',
          },
        ],
        want: [
          'ran only on SQLite: delete from "entities" where "id" = ? (issued at runtime/assets/entities.ts:41; ran on s3, not on postgres, s3-postgres)',
        ],
      },
    ],
    [
      'an IN list of another length on PostgreSQL is the same statement',
      {
        given: [
          sql('sqlite', 'select * from "work" where "kind" in (?, ?, ?)', 'runtime/queue/start-probe.ts'),
          sql('postgres', 'select * from "work" where "kind" in (?, ?)', 'runtime/queue/start-probe.ts'),
        ],
        want: [],
      },
    ],
    [
      'a SQLite-named file whose PostgreSQL counterpart ran on PostgreSQL',
      {
        given: [
          sql('sqlite', 'insert into "tasks" default values', 'runtime/tasks/accept-sqlite.ts'),
          sql('postgres', 'with accepted as (select 1) select 1', 'runtime/tasks/accept-postgres.ts'),
        ],
        want: [],
      },
    ],
    [
      'FAILS: a SQLite-named file whose counterpart never ran on PostgreSQL',
      {
        given: [sql('sqlite', 'insert into "tasks" default values', 'runtime/tasks/accept-sqlite.ts')],
        want: [
          'ran only on SQLite: insert into "tasks" default values (issued at runtime/tasks/accept-sqlite.ts; ran on sqlite, not on postgres, s3-postgres)',
        ],
      },
    ],
    [
      'the pg spelling of a counterpart',
      {
        given: [
          sql('sqlite', 'update "wallets" set "held" = ?', 'runtime/ledger/hold-sqlite.ts'),
          sql('postgres', 'select hold(?)', 'runtime/ledger/hold-pg.ts'),
        ],
        want: [],
      },
    ],
    [
      "a SQLite-named file with no counterpart is SQLite's own machinery",
      { given: [sql('sqlite', 'PRAGMA wal_checkpoint(PASSIVE)', 'runtime/storage/sqlite-checkpoints.ts')], want: [] },
    ],
    [
      'connection settings and the lock mode of BEGIN',
      {
        given: [
          sql('sqlite', 'PRAGMA foreign_keys = ON', 'runtime/storage/dialect.ts'),
          sql('sqlite', 'BEGIN IMMEDIATE', 'runtime/ledger/ledger.ts'),
          sql('postgres', 'begin', 'runtime/ledger/ledger.ts'),
        ],
        want: [],
      },
    ],
    [
      'FAILS: a store operation only on the local store, where the S3 store has its own',
      {
        given: [store('local', 'read')],
        want: [
          'store operation ran only on the local store: read (the S3 store has its own; not on the s3, s3-postgres projects)',
        ],
      },
    ],
    ['an operation the S3 store has no path of its own for', { given: [store('local', 'putShared')], want: [] }],
  ])('%s', (_name, { given, want }) => {
    expect(statementProblems(input(given))).toEqual(want);
  });

  it.each<[string, { given: Recorded[]; want: string[] }]>([
    [
      'FAILS: nothing on PostgreSQL at all',
      {
        given: [sql('sqlite', 'select 1', 'runtime/ledger/ledger.ts')],
        want: ['no statement ran on PostgreSQL: the postgres project did not run (MEDIAFORGE_TEST_PG)'],
      },
    ],
    [
      'FAILS: nothing on S3 at all',
      { given: [store('local', 'put')], want: ['no store operation ran on S3: the s3 projects did not run'] },
    ],
  ])('without one side: %s', (_name, { given, want }) => {
    expect(statementProblems({ records: given, sourceFiles: SOURCES, s3Operations: new Set(['put']) })).toEqual(want);
  });
});
