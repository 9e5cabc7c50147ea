import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { run } from '../../runtime/cli/main.js';
import { ROOT } from './root.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `mediaforge ARGS` run as an operator runs it: `node bin/mediaforge.js`, a process of its own
 * (the compiled CLI when dist/ is current), on the database `dbUrl`, with `env` over the test's
 * environment. Resolves with the exit code and what it printed; never rejects on a non-zero exit.
 */
export function mediaforgeCli(dbUrl: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/mediaforge.js'), ...args],
      { cwd: ROOT, env: { ...process.env, MEDIAFORGE_DB: dbUrl, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * `mediaforge ARGS --db dbUrl --json` run in this process (the CLI's own `run`, no process start):
 * expects exit 0 and answers the JSON it printed last. For suites that use the CLI to set things up
 * rather than to test how it runs as a process.
 */
export async function mediaforgeJsonInProcess(dbUrl: string, args: string[]): Promise<any> {
  const printed: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
  try {
    const code = await run([...args, '--db', dbUrl, '--json']);
    expect(code, printed.join('\n')).toBe(0);
  } finally {
    log.mockRestore();
  }
  return JSON.parse(printed.at(-1)!);
}

/**
 * `mediaforge serve --port 0 --migrate` as a process of its own, on a fresh SQLite file in `dir`,
 * run until it exits (a refusal) or until it prints its listening line (then stopped with SIGTERM,
 * which may land before its handler: after a start the exit code says nothing). `env` goes over
 * the test's environment and the defaults (MEDIAFORGE_DATA_DIR, MEDIAFORGE_SECRET).
 */
export function serveUntilListening(
  dir: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'serve', '--port', '0', '--migrate'], {
    cwd: ROOT,
    env: {
      ...process.env,
      MEDIAFORGE_DB: `sqlite:${join(dir, `db-${Math.random().toString(36).slice(2)}.sqlite`)}`,
      MEDIAFORGE_DATA_DIR: dir,
      MEDIAFORGE_SECRET: 'test-secret',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = { code: null as number | null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => {
    run.stdout += chunk;
    if (run.stdout.includes('mediaforge listening on')) child.kill('SIGTERM');
  });
  child.stderr.on('data', (chunk) => (run.stderr += chunk));
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      run.code = code;
      resolve(run);
    }),
  );
}
