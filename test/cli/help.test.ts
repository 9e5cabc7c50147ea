/**
 * The `mediaforge` command line as a user meets it (`node bin/mediaforge.js`, a real process): help
 * in every spelling exits 0 on stdout; a usage mistake exits 2 with one `mediaforge: ...` line and
 * the usage on stderr; values are checked before anything is written; a first command on a new
 * SQLite file migrates it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { LANGUAGES } from '../../generated/errors.js';
import { ROOT } from '../support/build.js';

const dir = mkdtempSync(join(tmpdir(), 'mediaforge-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/mediaforge.js'), ...args],
      { cwd: dir, env: { ...process.env, MEDIAFORGE_DB: `sqlite:${join(dir, 'default.db')}` } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

interface Want {
  code: number;
  stdout?: RegExp;
  /** The one `mediaforge: ...` line a usage error prints first. */
  error?: RegExp;
  usage?: RegExp;
}

const ROWS: [string, { given: string[]; want: Want }][] = [
  [
    '--help',
    {
      given: ['--help'],
      want: { code: 0, stdout: /^usage: mediaforge <command> \[options\][\s\S]*accounts create[\s\S]*webhooks resend/ },
    },
  ],
  ['-h', { given: ['-h'], want: { code: 0, stdout: /^usage: mediaforge <command>/ } }],
  ['help', { given: ['help'], want: { code: 0, stdout: /^usage: mediaforge <command>/ } }],
  [
    'help CMD',
    {
      given: ['help', 'accounts', 'create'],
      want: {
        code: 0,
        stdout: /^usage: mediaforge accounts create \[--credits N\] \[--language L\][\s\S]*--language L +language/,
      },
    },
  ],
  [
    'CMD --help',
    { given: ['keys', 'create', '--help'], want: { code: 0, stdout: /^usage: mediaforge keys create --account ID/ } },
  ],
  [
    'CMD -h with an argument',
    {
      given: ['webhooks', 'resend', '-h'],
      want: { code: 0, stdout: /^usage: mediaforge webhooks resend DELIVERY_ID/ },
    },
  ],
  [
    '--help wins over a bad flag',
    { given: ['serve', '--bogus', '--help'], want: { code: 0, stdout: /^usage: mediaforge serve/ } },
  ],
  [
    '--version',
    { given: ['--version'], want: { code: 0, stdout: new RegExp(`^${VERSION.replace(/\./g, '\\.')}\\n$`) } },
  ],
  [
    'no command',
    { given: [], want: { code: 2, error: /^mediaforge: no command given$/, usage: /usage: mediaforge <command>/ } },
  ],
  [
    'an unknown command',
    {
      given: ['frobnicate'],
      want: {
        code: 2,
        error: /^mediaforge: unknown command: frobnicate$/,
        usage: /\n\nmediaforge --help lists the commands\n$/,
      },
    },
  ],
  [
    'a mistyped command (issue 28, item 8)',
    {
      given: ['acounts', 'create'],
      want: {
        code: 2,
        error: /^mediaforge: unknown command: acounts; did you mean accounts\?$/,
        usage: /--help lists/,
      },
    },
  ],
  [
    'help for a group (issue 28, item 8)',
    {
      given: ['help', 'accounts'],
      want: {
        code: 0,
        stdout:
          /^mediaforge accounts commands:\n\n {2}mediaforge accounts create [\s\S]*mediaforge help accounts COMMAND/,
      },
    },
  ],
  [
    'a group without its subcommand',
    {
      given: ['webhooks'],
      want: {
        code: 2,
        error: /^mediaforge: webhooks needs one of: add, list, .*resend$/,
        usage: /mediaforge webhooks add --account ID/,
      },
    },
  ],
  [
    'help for an unknown command',
    { given: ['help', 'nothing'], want: { code: 2, error: /^mediaforge: no command nothing$/ } },
  ],
  [
    'help for a mistyped command',
    {
      given: ['help', 'deploymnets'],
      want: { code: 2, error: /^mediaforge: no command deploymnets; did you mean deployments\?$/ },
    },
  ],
  [
    'an unknown flag',
    {
      given: ['accounts', 'create', '--bogus'],
      want: {
        code: 2,
        error: /^mediaforge: unknown option --bogus for mediaforge accounts create$/,
        usage: /usage: mediaforge accounts create /,
      },
    },
  ],
  [
    'a flag without its value',
    {
      given: ['credits', 'add', '--credits', '5', '--account'],
      want: { code: 2, error: /^mediaforge: --account needs a value \(ID\)$/, usage: /usage: mediaforge credits add/ },
    },
  ],
  [
    'a required flag left out',
    {
      given: ['keys', 'create'],
      want: { code: 2, error: /^mediaforge: --account is required$/, usage: /usage: mediaforge keys create/ },
    },
  ],
  [
    'a missing positional',
    {
      given: ['webhooks', 'resend'],
      want: { code: 2, error: /^mediaforge: mediaforge webhooks resend needs DELIVERY_ID$/ },
    },
  ],
  [
    'an extra positional',
    {
      given: ['migrate', 'now'],
      want: { code: 2, error: /^mediaforge: unexpected argument for mediaforge migrate: now$/ },
    },
  ],
  [
    'a language outside the 12',
    {
      given: ['accounts', 'create', '--language', 'xx'],
      want: {
        code: 2,
        error: new RegExp(`^mediaforge: --language must be one of ${LANGUAGES.join(', ')} \\(got xx\\)$`),
      },
    },
  ],
  [
    'credits that are not a whole number',
    {
      given: ['accounts', 'create', '--credits', 'ten'],
      want: { code: 2, error: /^mediaforge: --credits must be a whole number$/ },
    },
  ],
  [
    'a payload version other than 1 or 2',
    {
      given: ['accounts', 'set', '--account', 'acct_x', '--payload-version', '3'],
      want: { code: 2, error: /^mediaforge: --payload-version must be 1 or 2$/ },
    },
  ],
  [
    'a role that does not exist',
    {
      given: ['serve', '--role', 'both'],
      want: { code: 2, error: /^mediaforge: --role must be api, worker or all \(got both\)$/ },
    },
  ],
  [
    'a port out of range',
    {
      given: ['serve', '--port', '99999'],
      want: { code: 2, error: /^mediaforge: the port must be a whole number up to 65535/ },
    },
  ],
];

describe('mediaforge help and usage errors', () => {
  it.each(ROWS)('%s', async (_name, { given, want }) => {
    const r = await cli(given);
    expect(r.code, r.stderr).toBe(want.code);
    if (want.stdout) expect(r.stdout).toMatch(want.stdout);
    if (want.code === 0) expect(r.stderr).toBe('');
    if (want.error) {
      const lines = r.stderr.split('\n');
      expect(lines[0]).toMatch(want.error);
      expect(lines.filter((line) => line.startsWith('mediaforge: '))).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
    if (want.usage) expect(r.stderr).toMatch(want.usage);
  });

  it('a bad value writes nothing: --language xx leaves no database behind', async () => {
    const db = join(dir, 'never.db');
    const r = await cli(['accounts', 'create', '--language', 'xx', '--db', `sqlite:${db}`]);
    expect(r.code).toBe(2);
    expect(() => readFileSync(db)).toThrow();
  });

  it('a first command on a new SQLite file migrates it and works (no "no such table")', async () => {
    const db = `sqlite:${join(dir, 'fresh', 'first.db')}`;
    const created = await cli(['accounts', 'create', '--credits', '500', '--language', 'de', '--json', '--db', db]);
    expect(created.stderr).toBe('');
    expect(JSON.parse(created.stdout)).toMatchObject({
      accountId: expect.stringMatching(/^acct_/),
      apiKey: expect.stringMatching(/^sk-service-/),
    });
    const added = await cli([
      'credits',
      'add',
      '--account',
      JSON.parse(created.stdout).accountId,
      '--credits',
      '5',
      '--json',
      '--db',
      db,
    ]);
    expect(JSON.parse(added.stdout)).toEqual({
      accountId: JSON.parse(created.stdout).accountId,
      added: 5,
      replayed: false,
    });
    expect(JSON.parse((await cli(['migrate', '--json', '--db', db])).stdout)).toEqual({ applied: [] });
  });

  // A PostgreSQL database is migrated by its operator: the command names what to run and changes nothing.
  it.skipIf(!process.env.MEDIAFORGE_TEST_PG)(
    'on an unmigrated PostgreSQL database a command says exactly what to run',
    async () => {
      const server = process.env.MEDIAFORGE_TEST_PG!;
      const schema = `t_cli_unmigrated_${process.pid}`;
      const admin = new pg.Client({ connectionString: server });
      await admin.connect();
      try {
        await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
        const url = `${server}${server.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
        const r = await cli(['accounts', 'create', '--credits', '5', '--json', '--db', url]);
        expect(r.code).toBe(1);
        expect(r.stderr.trim()).toBe(
          `mediaforge: the database at ${url} is not migrated (pending: ${(r.stderr.match(/pending: ([^)]*)/) ?? [])[1]}); run: mediaforge migrate --db ${url}`,
        );
        expect(r.stderr).toMatch(/pending: 0001-initial, /);
        const tables = await admin.query(
          `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'accounts'`,
          [schema],
        );
        expect(tables.rows[0].n).toBe(0);
      } finally {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      }
    },
  );
});
