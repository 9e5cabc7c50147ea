/**
 * Process starts on the compiled CLI in dist/ (built first when it is not current), each the median
 * of several runs after one uncounted warm-up, a new process each time:
 * - cliHelpMs: `mediaforge --help` as a user runs it. The CLI imports a command's module only when
 *   that command runs, so help loads the command table and nothing of the service.
 * - commandStartMs: `mediaforge deployments status` on a migrated SQLite database: a command that
 *   opens the database, the shape of most operator commands (and of the many the suites run).
 * - serveReadyMs: `mediaforge serve` from spawn to its "listening" line, on a migrated database:
 *   what every suite that starts a real server waits for (issue 38).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildState, ROOT } from '../scripts/build-state.mjs';
import { round, type BenchOutput, type RunMode } from './support.js';

const run = promisify(execFile);

export async function benchCli(mode: RunMode): Promise<BenchOutput> {
  const built = buildState() === 'current';
  if (!built)
    execFileSync(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, 'scripts/build.ts')], {
      cwd: ROOT,
      stdio: 'ignore',
    });
  const runs = mode.quick ? 5 : 11;
  const cli = join(ROOT, 'bin/mediaforge.js');
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-bench-cli-'));
  const env = { ...process.env, MEDIAFORGE_DB: `sqlite:${join(dir, 'mediaforge.db')}`, MEDIAFORGE_DATA_DIR: dir };
  try {
    await run(process.execPath, [cli, 'migrate'], { cwd: ROOT, env });
    const help = await medianOf(runs, () => run(process.execPath, [cli, '--help'], { cwd: ROOT }));
    const command = await medianOf(runs, () =>
      run(process.execPath, [cli, 'deployments', 'status'], { cwd: ROOT, env }),
    );
    const serve = await medianOf(runs, () => serveUntilListening(cli, env));
    const said = (name: string, m: Median) =>
      `${name}: median ${m.median.toFixed(0)} ms, min ${m.min.toFixed(0)} ms, max ${m.max.toFixed(0)} ms`;
    return {
      figures: {
        cliHelpMs: round(help.median, 1),
        commandStartMs: round(command.median, 1),
        serveReadyMs: round(serve.median, 1),
      },
      notes: [
        `cli: on dist/${built ? '' : ' (built for this run)'}, ${runs} runs each after a warm-up; ${said('--help', help)}; ${said('deployments status', command)}; ${said('serve to listening', serve)}`,
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Median {
  median: number;
  min: number;
  max: number;
}

/** The median wall time of `runs` calls of `once`, after one uncounted warm-up. */
async function medianOf(runs: number, once: () => Promise<unknown>): Promise<Median> {
  const times: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const started = process.hrtime.bigint();
    await once();
    if (i > 0) times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], min: times[0], max: times[times.length - 1] };
}

/** Starts `serve` on a free loopback port, resolves when it says it listens, and stops it (SIGTERM) before resolving. */
async function serveUntilListening(cli: string, env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const watch = (chunk: Buffer) => {
      seen += chunk;
      if (seen.includes('mediaforge listening on ')) resolve();
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', watch);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before listening`)));
  });
  child.kill('SIGTERM');
  await exited;
}
