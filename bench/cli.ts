/**
 * cliHelpMs: the wall time of `mediaforge --help` as a user runs it (`node bin/mediaforge.js --help`,
 * a new process each time) on the compiled CLI in dist/ (built first when it is not current), the
 * median of several runs after one uncounted warm-up. The CLI imports a command's module only when
 * that command runs, so help loads the command table and nothing of the service.
 */
import { execFile, execFileSync } from 'node:child_process';
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
  const times: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const started = process.hrtime.bigint();
    await run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), '--help'], { cwd: ROOT });
    if (i > 0) times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  return {
    figures: { cliHelpMs: round(median, 1) },
    notes: [
      `cli: mediaforge --help on dist/${built ? '' : ' (built for this run)'}, ${runs} runs after a warm-up: median ${median.toFixed(0)} ms, min ${times[0].toFixed(0)} ms, max ${times[times.length - 1].toFixed(0)} ms`,
    ],
  };
}
