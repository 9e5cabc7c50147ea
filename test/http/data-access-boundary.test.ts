import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';
import { tsFiles } from '../support/source-files.js';

/** Every .ts file under a directory of the checkout, as paths relative to the root (with `/`). */
/** The files under `dir` whose text matches `pattern`, apart from `allowed` (prefixes). */
function offenders(dir: string, pattern: RegExp, allowed: readonly string[] = []): string[] {
  return tsFiles(dir).filter(
    (file) =>
      !allowed.some((prefix) => file.startsWith(prefix)) && pattern.test(readFileSync(join(ROOT, file), 'utf8')),
  );
}

const SELECT = /\.selectFrom\(/;
const SELECT_WALLETS = /\.(?:selectFrom|updateTable)\(\s*['"]wallets['"]/;
const SELECT_TASKS = /\.selectFrom\(\s*['"]tasks['"]/;
/** The tables of money: their rows change in runtime/ledger only. */
const MONEY_TABLE = String.raw`"?(?:wallets|holds|ledger_entries)\b"?`;
/** A raw statement text that changes a money table (`UPDATE wallets`, `INSERT INTO holds`, `delete from "ledger_entries"`). */
const RAW_MONEY_WRITE = new RegExp(String.raw`\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+${MONEY_TABLE}`, 'i');
/** A Kysely write to a money table, or a statement text built for one (`sqliteInsertText('holds', …)`). */
const BUILT_MONEY_WRITE =
  /\.(?:updateTable|insertInto|deleteFrom|replaceInto|mergeInto)\(\s*['"](?:wallets|holds|ledger_entries)['"]|sqliteInsertText\(\s*['"](?:wallets|holds|ledger_entries)['"]/;
/** A raw read of the wallets table (`select "available" from "wallets"`). */
const RAW_WALLETS_READ = /\b(?:FROM|JOIN)\s+"?wallets\b/i;
/** A raw statement text that changes the tasks table (`UPDATE tasks`, `insert into "tasks"`, `DELETE FROM tasks`). */
const RAW_TASKS_WRITE = /\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+"?tasks\b"?/i;
/** A Kysely write to the tasks table, or a statement text built for one (`sqliteInsertText('tasks', …)`). */
const BUILT_TASKS_WRITE =
  /\.(?:updateTable|insertInto|deleteFrom|replaceInto|mergeInto)\(\s*['"`]tasks['"`]|sqliteInsertText\(\s*['"`]tasks['"`]/;
/**
 * A write whose table no reader of the text can name: a Kysely write given a variable or an
 * expression (`deleteFrom(table)`), or a raw one whose table is interpolated (`DELETE FROM ${table}`).
 * The rules above read table names, so such a write could change any table unseen.
 */
const UNNAMED_TABLE_WRITE =
  /\.(?:updateTable|insertInto|deleteFrom|replaceInto|mergeInto)\(\s*(?!['"`\s])|\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+"?\$\{/i;
const INSERT_WORK = /\.insertInto\(\s*['"]work_items['"]/;
/** Any mention of the work items table: a query, a statement text, a comment. */
const WORK_ITEMS = /\bwork_items\b/;
/** The (created_at, id) keyset condition, either spelling: `x.refTuple('created_at', 'id')` or `x.or([x('created_at', …), x.and([…])])`. */
const KEYSET = /refTuple\(\s*['"]created_at['"]|\.or\(\[\s*\w+\(\s*['"]created_at['"]/;

describe('data access stays behind its modules (issue 20)', () => {
  it('no route handler or console module writes a SELECT: they call the repositories', () => {
    expect([...offenders('runtime/http/routes', SELECT), ...offenders('runtime/console', SELECT)]).toEqual([]);
  });

  it('the wallets table is read and changed in runtime/ledger only', () => {
    expect(offenders('runtime', SELECT_WALLETS, ['runtime/ledger/', 'runtime/storage/migrations/'])).toEqual([]);
  });

  it('no statement outside runtime/ledger writes wallets, holds or ledger entries, raw or through Kysely (issue 26)', () => {
    const allowed = ['runtime/ledger/', 'runtime/storage/migrations/'];
    expect([
      ...offenders('runtime', RAW_MONEY_WRITE, allowed),
      ...offenders('runtime', BUILT_MONEY_WRITE, allowed),
    ]).toEqual([]);
  });

  it('no raw statement outside runtime/ledger reads the wallets table (issue 26)', () => {
    expect(offenders('runtime', RAW_WALLETS_READ, ['runtime/ledger/', 'runtime/storage/migrations/'])).toEqual([]);
  });

  it('tasks are read in runtime/tasks (the deployments module keeps its two aggregates per deployment)', () => {
    expect(
      offenders('runtime', SELECT_TASKS, [
        'runtime/tasks/',
        'runtime/storage/migrations/',
        'runtime/routing/health.ts',
        'runtime/routing/margin.ts',
      ]),
    ).toEqual([]);
  });

  it('no statement outside runtime/tasks writes the tasks table, raw or through Kysely (issue 42: one owner of the task row)', () => {
    const allowed = ['runtime/tasks/', 'runtime/storage/migrations/'];
    expect([
      ...offenders('runtime', RAW_TASKS_WRITE, allowed),
      ...offenders('runtime', BUILT_TASKS_WRITE, allowed),
    ]).toEqual([]);
  });

  it('every write names its table in the text, so that the rules above can read it (issue 42)', () => {
    // The statement text builder takes the table from its callers, who name it (`sqliteInsertText('tasks', …)`: read above).
    expect(offenders('runtime', UNNAMED_TABLE_WRITE, ['runtime/storage/migrations/'])).toEqual([
      'runtime/storage/sqlite-insert-text.ts',
    ]);
  });

  it('work items are inserted by scheduleWork only', () => {
    expect(offenders('runtime', INSERT_WORK, ['runtime/storage/migrations/'])).toEqual([
      'runtime/queue/schedule-work.ts',
    ]);
  });

  it('the work_items table is read and written in runtime/queue only (issue 26; its schema and migrations aside)', () => {
    expect(
      offenders('runtime', WORK_ITEMS, ['runtime/queue/', 'runtime/storage/schema.ts', 'runtime/storage/migrations/']),
    ).toEqual([]);
  });

  it('the keyset condition is written once, in storage/cursor.ts', () => {
    expect(offenders('runtime', KEYSET)).toEqual(['runtime/storage/cursor.ts']);
  });

  it('the patterns catch what they are meant to (the checks are not vacuous)', () => {
    expect(SELECT.test("await db.kysely.selectFrom('tasks').selectAll()")).toBe(true);
    expect(SELECT_WALLETS.test("trx\n    .selectFrom('wallets')")).toBe(true);
    expect(SELECT_TASKS.test("ctx.db.kysely\n  .selectFrom('tasks')")).toBe(true);
    for (const text of [
      'UPDATE wallets SET available = available - $4::bigint',
      'update "wallets" set "available" = "available" - ?',
      'INSERT INTO holds (task_id, account_id)',
      'insert into "ledger_entries" ("account_id") values (?)',
      'DELETE FROM holds WHERE task_id = $1',
    ])
      expect([text, RAW_MONEY_WRITE.test(text)]).toEqual([text, true]);
    for (const text of [
      "trx\n    .updateTable('wallets')",
      "trx.insertInto('holds').values({})",
      'db.deleteFrom("ledger_entries")',
      "sqliteInsertText('holds', ['task_id'])",
    ])
      expect([text, BUILT_MONEY_WRITE.test(text)]).toEqual([text, true]);
    for (const text of ['UPDATE wallet_history SET x = 1', "trx.updateTable('tasks')", 'INSERT INTO holdings (a)'])
      expect([text, RAW_MONEY_WRITE.test(text) || BUILT_MONEY_WRITE.test(text)]).toEqual([text, false]);
    for (const text of [
      "UPDATE tasks SET state = 'running' WHERE id = ?",
      'update "tasks" set "progress" = ?',
      'INSERT INTO tasks SELECT r.* FROM json_populate_record(NULL::tasks, $5::json) r',
      'delete from "tasks" where "id" = ?',
      'DELETE FROM tasks WHERE id = $1',
    ])
      expect([text, RAW_TASKS_WRITE.test(text)]).toEqual([text, true]);
    for (const text of [
      "ctx.db.kysely\n    .updateTable('tasks')",
      "trx.insertInto('tasks').values(row)",
      'db.deleteFrom("tasks")',
      'trx.updateTable(`tasks`)',
      "sqliteInsertText('tasks', TASK_COLUMNS)",
    ])
      expect([text, BUILT_TASKS_WRITE.test(text)]).toEqual([text, true]);
    for (const text of [
      "trx.updateTable('tasks_archive')",
      'UPDATE task_events SET x = 1',
      'create index tasks_by_finish on tasks (finished_at)',
      "db.selectFrom('tasks').selectAll()",
      'select * from "tasks" where "id" = ?',
    ])
      expect([text, RAW_TASKS_WRITE.test(text) || BUILT_TASKS_WRITE.test(text)]).toEqual([text, false]);
    for (const text of ['db.deleteFrom(table)', 'trx.updateTable(names[kind])', `DELETE FROM \${table} WHERE id = $1`])
      expect([text, UNNAMED_TABLE_WRITE.test(text)]).toEqual([text, true]);
    for (const text of [
      "db.deleteFrom('blob_chunks')",
      "trx\n  .insertInto(\n    'assets')",
      `UPDATE uploads SET a = \${x}`,
    ])
      expect([text, UNNAMED_TABLE_WRITE.test(text)]).toEqual([text, false]);
    expect(RAW_WALLETS_READ.test('select "available" from "wallets" where "account_id" = ?')).toBe(true);
    expect(RAW_WALLETS_READ.test('(SELECT available FROM wallets WHERE account_id = $1)')).toBe(true);
    expect(WORK_ITEMS.test("ctx.db.kysely.selectFrom('work_items')")).toBe(true);
    expect(WORK_ITEMS.test('INSERT INTO work_items (kind) VALUES ($1)')).toBe(true);
    expect(WORK_ITEMS.test('the work items of a task')).toBe(false);
    expect(INSERT_WORK.test("trx.insertInto('work_items').values({})")).toBe(true);
    expect(KEYSET.test("eb.or([eb('created_at', '<', createdAt), eb.and([])])")).toBe(true);
    expect(KEYSET.test("eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(createdAt, id))")).toBe(true);
    expect(relative(ROOT, join(ROOT, 'runtime'))).toBe('runtime');
  });
});
