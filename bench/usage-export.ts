/**
 * usageExportRssGrowthMb (issue 39): `mediaforge usage export --format focus` over 1,000,000 billed
 * tasks (100,000 with --quick) in a SQLite database seeded while no service runs (bench/seed.ts), run
 * as an operator runs it (a process of its own, on the compiled CLI) with its output read and
 * dropped. The figure is the export process's largest resident set while it writes, less its
 * resident set when the header arrives (modules loaded, database open): what the rows cost in memory.
 * Target: under 100 MiB.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildState, ROOT } from '../scripts/build-state.mjs';
import { seedFinishedTasks } from './seed.js';
import { isMain, round, type BenchOutput, type RunMode } from './support.js';

/** The process's resident set in KiB (Linux), or undefined once it has gone. */
function residentKib(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export async function benchUsageExport(mode: RunMode): Promise<BenchOutput> {
  if (buildState() !== 'current')
    execFileSync(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, 'scripts/build.ts')], {
      cwd: ROOT,
      stdio: 'ignore',
    });
  const count = mode.quick ? 100_000 : 1_000_000;
  const dir = mkdtempSync(join(tmpdir(), 'mediaforge-bench-export-'));
  try {
    const path = join(dir, 'export.db');
    const seeded = await seedFinishedTasks(path, count);
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'bin/mediaforge.js'),
        'usage',
        'export',
        '--from',
        day(Date.now() - 2 * 86_400_000),
        '--to',
        day(Date.now() + 86_400_000),
        '--format',
        'focus',
        '--currency',
        'USD',
        '--credit-value',
        '0.01',
        '--db',
        `sqlite:${path}`,
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let baseline: number | undefined;
    let peak = 0;
    let lines = 0;
    const sample = () => {
      const kib = residentKib(child.pid!);
      if (kib !== undefined) peak = Math.max(peak, kib);
    };
    const sampler = setInterval(sample, 20);
    child.stdout.on('data', (chunk: Buffer) => {
      if (baseline === undefined) baseline = residentKib(child.pid!);
      for (const byte of chunk) if (byte === 10) lines++;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    if (code !== 0 || baseline === undefined) throw new Error(`usage export exited ${code}`);
    const growthMb = (peak - baseline) / 1024;
    return {
      figures: { usageExportRssGrowthMb: round(growthMb, 1) },
      notes: [
        `usage-export: ${lines - 1} FOCUS rows of ${count} seeded tasks (seeded in ${seeded.seconds.toFixed(1)} s) in ${seconds.toFixed(1)} s; resident set ${(baseline / 1024).toFixed(1)} MiB at the header, at most ${(peak / 1024).toFixed(1)} MiB`,
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  console.log(JSON.stringify(await benchUsageExport({ quick })));
}
