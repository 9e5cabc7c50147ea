/**
 * The statement record's normalisation and attribution (test/support/statement-recorder.mjs,
 * test/support/statement-check.ts): how a recorded statement is compared across engines, and which
 * file of its stack issued it (a test's own SQL through the dialect is no runtime statement).
 */
import { describe, expect, it } from 'vitest';
import { comparable, issuedAt, issuer } from '../../support/statement-check.js';
import { normalizedStatement, stackSites } from '../../support/statement-recorder.mjs';

describe('the statement record', () => {
  it.each<[string, { given: string; want: string }]>([
    ['placeholders of PostgreSQL as ?', { given: 'select $1, $12', want: 'select ?, ?' }],
    ['whitespace collapsed', { given: ' select\n  *\tfrom "t" ', want: 'select * from "t"' }],
  ])('recorded without parameters: %s', (_name, { given, want }) => {
    expect(normalizedStatement(given)).toBe(want);
  });

  it.each<[string, { given: string; want: string }]>([
    ["SQLite's lock mode dropped", { given: 'BEGIN IMMEDIATE', want: 'begin' }],
    ['an IN list of three as one', { given: 'select 1 where "k" in (?, ?, ?)', want: 'select 1 where "k" in (?)' }],
    ['an IN list of two as one', { given: 'select 1 where "k" in (?, ?)', want: 'select 1 where "k" in (?)' }],
    ['NOT IN alike', { given: 'delete from "t" where "k" not in (?,?)', want: 'delete from "t" where "k" not in (?)' }],
    ['a subquery IN kept', { given: 'select 1 where "k" in (select 2)', want: 'select 1 where "k" in (select 2)' }],
    ['a name ending in "in" kept', { given: 'select "login" (?, ?)', want: 'select "login" (?, ?)' }],
  ])('compared: %s', (_name, { given, want }) => {
    expect(comparable(given)).toBe(want);
  });

  it.each<[string, { given: string[]; want: string | undefined }]>([
    [
      'the runtime file past the runners',
      { given: ['runtime/storage/dialect.ts', 'runtime/ledger/ledger.ts'], want: 'runtime/ledger/ledger.ts' },
    ],
    [
      'a test through the dialect: none',
      { given: ['runtime/storage/dialect.ts', 'test/ops/ops.test.ts'], want: undefined },
    ],
    [
      'a loopback server of support/: none',
      { given: ['support/upstreams/x.ts', 'runtime/ledger/ledger.ts'], want: undefined },
    ],
    [
      'a runtime file a test called',
      { given: ['runtime/assets/entities.ts', 'test/files/library.test.ts'], want: 'runtime/assets/entities.ts' },
    ],
    [
      'a generated module',
      { given: ['runtime/storage/executor.ts', 'generated/queries.ts'], want: 'generated/queries.ts' },
    ],
    [
      'only runners: the innermost past dialect.ts',
      {
        given: ['runtime/storage/dialect.ts', 'runtime/storage/sqlite-group-commit.ts'],
        want: 'runtime/storage/sqlite-group-commit.ts',
      },
    ],
    ['nothing of the repository: none', { given: [], want: undefined }],
  ])('issued by: %s', (_name, { given, want }) => {
    expect(issuer(given)).toBe(want);
  });

  it.each<[string, { given: string; want: string | undefined }]>([
    [
      'the repository frames, innermost first, each file once at its first line; the recorder itself and packages are no caller',
      {
        given: [
          'Error',
          '    at record (file:///work/m/test/support/statement-recorder.mjs:57:19)',
          '    at Database.prepare (file:///work/m/test/support/statement-recorder.mjs:80:9)',
          '    at run (/work/m/node_modules/kysely/dist/esm/x.js:10:2)',
          '    at runSql (/work/m/runtime/storage/dialect.ts:120:11)',
          '    at deleteEntity (/work/m/runtime/assets/entities.ts:41:5)',
          '    at async other (/work/m/runtime/assets/entities.ts:60:5)',
          '    at async /work/m/test/files/library.test.ts:230:7',
        ].join('\n'),
        want: 'runtime/assets/entities.ts:41',
      },
    ],
    [
      'a build as its sources',
      { given: 'Error\n    at f (/work/m/dist/runtime/ledger/ledger.js:7:1)', want: 'runtime/ledger/ledger.ts:7' },
    ],
    [
      'a test alone: no issuer',
      {
        given: 'Error\n    at /work/m/runtime/storage/dialect.ts:3:1\n    at /work/m/test/a.test.ts:5:1',
        want: undefined,
      },
    ],
  ])('from a stack: %s', (_name, { given, want }) => {
    const sites = stackSites(given);
    expect(issuedAt({ files: sites.map((s) => s.file), lines: sites.map((s) => s.line) })).toBe(want);
  });
});
