import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/catalogue.js';

/** Every .ts file under a directory of the checkout, as paths relative to the root (with `/`). */
function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

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
const INSERT_WORK = /\.insertInto\(\s*['"]work_items['"]/;
/** The (created_at, id) keyset condition, either spelling: `x.refTuple('created_at', 'id')` or `x.or([x('created_at', …), x.and([…])])`. */
const KEYSET = /refTuple\(\s*['"]created_at['"]|\.or\(\[\s*\w+\(\s*['"]created_at['"]/;

describe('data access stays behind its modules (issue 20)', () => {
  it('no route handler or console module writes a SELECT: they call the repositories', () => {
    expect([...offenders('runtime/http/routes', SELECT), ...offenders('runtime/console', SELECT)]).toEqual([]);
  });

  it('the wallets table is read and changed in runtime/ledger only', () => {
    expect(offenders('runtime', SELECT_WALLETS, ['runtime/ledger/', 'runtime/storage/migrations/'])).toEqual([]);
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

  it('work items are inserted by scheduleWork only', () => {
    expect(offenders('runtime', INSERT_WORK, ['runtime/storage/migrations/'])).toEqual([
      'runtime/worker/schedule-work.ts',
    ]);
  });

  it('the keyset condition is written once, in storage/cursor.ts', () => {
    expect(offenders('runtime', KEYSET)).toEqual(['runtime/storage/cursor.ts']);
  });

  it('the patterns catch what they are meant to (the checks are not vacuous)', () => {
    expect(SELECT.test("await db.kysely.selectFrom('tasks').selectAll()")).toBe(true);
    expect(SELECT_WALLETS.test("trx\n    .selectFrom('wallets')")).toBe(true);
    expect(SELECT_TASKS.test("ctx.db.kysely\n  .selectFrom('tasks')")).toBe(true);
    expect(INSERT_WORK.test("trx.insertInto('work_items').values({})")).toBe(true);
    expect(KEYSET.test("eb.or([eb('created_at', '<', createdAt), eb.and([])])")).toBe(true);
    expect(KEYSET.test("eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(createdAt, id))")).toBe(true);
    expect(relative(ROOT, join(ROOT, 'runtime'))).toBe('runtime');
  });
});
