/**
 * vitest's per-file times, kept where they can be read (issue 38, "keep it fast"): after a run,
 * `test-times.json` (git-ignored) holds each file's time per project, slowest first, and the 15
 * slowest are printed below vitest's summary. A file's time is what its fork spent on it: preparing
 * the environment, importing (collect), the setup files and its tests and hooks.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { stallLine, watchEventLoop } from './event-loop-stalls.js';

export interface FileTime {
  file: string;
  project: string;
  /** Everything the file's fork spent on it, in ms. */
  ms: number;
  /** Of that, importing the file and its modules. */
  collectMs: number;
  /** Of that, its tests and hooks. */
  testsMs: number;
  tests: number;
}

/** The rows of a run, slowest first (ties by file and project, so the file is stable). */
export function fileTimes(modules: ReadonlyArray<TestModule>, root: string): FileTime[] {
  return modules
    .map((module) => {
      const d = module.diagnostic();
      return {
        file: relative(root, module.moduleId),
        project: module.project.name,
        ms: Math.round(
          d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration,
        ),
        collectMs: Math.round(d.collectDuration),
        testsMs: Math.round(d.duration),
        tests: [...module.children.allTests()].length,
      };
    })
    .sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file) || a.project.localeCompare(b.project));
}

/** The lines printed at the end of a run: the `count` slowest files and their share of the total. */
export function slowestLines(times: FileTime[], count = 15): string[] {
  const total = times.reduce((sum, row) => sum + row.ms, 0);
  if (times.length === 0) return [];
  return [
    `Slowest ${Math.min(count, times.length)} of ${times.length} files (all: ${(total / 1000).toFixed(1)} s of fork time; test-times.json has every file):`,
    ...times
      .slice(0, count)
      .map(
        (row) =>
          `  ${(row.ms / 1000).toFixed(1).padStart(6)} s  ${row.project.padEnd(11)} ${row.file} (import ${(row.collectMs / 1000).toFixed(1)} s, ${row.tests} tests)`,
      ),
  ];
}

export default class TimingReporter implements Reporter {
  private root = process.cwd();
  /** The main process answers every fork's rpc: a long stall of its own is printed too (test/support/event-loop-stalls.ts). */
  private stopWatching = () => {};

  onInit(vitest: { config: { root: string } }) {
    this.root = vitest.config.root;
    this.stopWatching = watchEventLoop((stall) =>
      process.stderr.write(
        stallLine("vitest's main process", stall, 'the run (it serves the forks and the global setups)'),
      ),
    );
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    this.stopWatching();
    const times = fileTimes(modules, this.root);
    if (times.length === 0) return;
    writeFileSync(`${this.root}/test-times.json`, `${JSON.stringify(times, null, 1)}\n`);
    console.log(`\n${slowestLines(times).join('\n')}`);
  }
}
