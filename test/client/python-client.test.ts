/**
 * The Python client's pytest suites (clients/python/tests) against a real `mediaforge serve`, run by
 * Debian's /usr/bin/python3 on this project's engine: SQLite in the sqlite project, PostgreSQL in
 * the postgres project (MEDIAFORGE_TEST_DB=postgres; the suites make their own schema of
 * MEDIAFORGE_TEST_PG). The mypy type tests, the packaging test and the docs blocks do not depend on the engine and
 * run in the sqlite project only. `.ci/run` installs python3-httpx, python3-pytest, python3-build, python3-setuptools,
 * python3-wheel and mypy.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';
import { TEST_DB } from '../support/service.js';

const PYTHON = '/usr/bin/python3';
const DIR = join(ROOT, 'clients/python');
const ENGINE_FREE = ['tests/test_types.py', 'tests/test_packaging.py', 'tests/test_docs.py'];

function pytest(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...args], {
      cwd: DIR,
      env: { ...process.env, MEDIAFORGE_TEST_DB: TEST_DB, PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe(`the Python client against a real serve (${TEST_DB})`, () => {
  it('passes every pytest suite, none skipped', async () => {
    const args = TEST_DB === 'postgres' ? ENGINE_FREE.flatMap((file) => ['--ignore', file]) : [];
    const { code, output } = await pytest(['-rs', ...args]);
    expect(code, output).toBe(0);
    const summary = output.trim().split('\n').pop() ?? '';
    expect(summary, output).toMatch(/\d+ passed/);
    expect(summary, output).not.toMatch(/skipped|failed|error/);
  }, 1_200_000);
});
