/**
 * The order in which a run starts its files: slowest first, by the times a whole run recorded.
 *
 * Why: vitest runs the projects one after another (sqlite, postgres, s3, s3-postgres) and, with
 * isolation off, waits for every file of a project to finish before it starts the next one. A long
 * file started late leaves the other forks idle until it ends, at each of the four boundaries.
 * vitest's own order is slowest first only where its cache (node_modules/.vite) has the times of
 * an earlier run; a clean clone has none and runs the largest files first, which are not the
 * slowest. Committed times (test/file-times.json) give every checkout the order a warm one has.
 *
 * A file's time is the newest known: this checkout's last run (test-times.json, git-ignored,
 * written by test/support/timing-reporter.ts), else the committed one. A file known to neither
 * (a new suite) starts first, in vitest's own order: its time is unknown, and a short file started
 * early costs nothing.
 * `npx tsx scripts/record-file-times.ts` copies a whole run's times into test/file-times.json.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import type { FileTime } from './timing-reporter.js';

/** The committed times: `project:file` → ms, slowest first. */
export const FILE_TIMES = 'test/file-times.json';
/** This checkout's last run (timing-reporter.ts). */
export const LAST_RUN_TIMES = 'test-times.json';

/** `project:file`, the key of a file in a project (the file relative to the root, `/`-separated). */
export const fileKey = (project: string, file: string): string => `${project}:${file}`;

/** The order of the committed times' entries (`[project:file, ms]`): slowest first, ties by key. */
export const slowestEntryFirst = ([a, msA]: readonly [string, number], [b, msB]: readonly [string, number]): number =>
  msB - msA || (a < b ? -1 : a > b ? 1 : 0);

/** The committed form of a run's rows: `project:file` → ms rounded to 100 ms, slowest first. */
export function committedTimes(rows: ReadonlyArray<FileTime>): Record<string, number> {
  return Object.fromEntries(
    rows
      .map((row) => [fileKey(row.project, row.file), Math.round(row.ms / 100) * 100] as const)
      .sort(slowestEntryFirst),
  );
}

/**
 * `keys` (each `project:file`) in the order to start them: unknown first (in the order given),
 * then slowest first; `later` wins over `earlier` where both know a file. Ties keep the given order.
 */
export function slowestFirst(
  keys: ReadonlyArray<string>,
  earlier: Readonly<Record<string, number>>,
  later: Readonly<Record<string, number>>,
): string[] {
  const time = (key: string): number => later[key] ?? earlier[key] ?? Number.POSITIVE_INFINITY;
  return keys
    .map((key, index) => ({ key, index, ms: time(key) }))
    .sort((a, b) => (a.ms === b.ms ? a.index - b.index : b.ms - a.ms))
    .map(({ key }) => key);
}

/** The times a file holds (either form: the committed map, or timing-reporter's rows); none when absent. */
export function readTimes(path: string): Record<string, number> {
  if (!existsSync(path)) return {};
  const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
  return Array.isArray(parsed) ? committedTimes(parsed as FileTime[]) : (parsed as Record<string, number>);
}

/** vitest's sequencer (vitest.config.ts `sequence.sequencer`): its sharding, this order. */
export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const key = (spec: TestSpecification) =>
      fileKey(spec.project.name, relative(root, spec.moduleId).split('\\').join('/'));
    // vitest's own order first (its cache's times, else the largest files first): the order of the
    // files no recorded run has timed.
    const given = await super.sort(files);
    const byKey = new Map(given.map((spec) => [key(spec), spec]));
    return slowestFirst(given.map(key), readTimes(join(root, FILE_TIMES)), readTimes(join(root, LAST_RUN_TIMES))).map(
      (k) => byKey.get(k)!,
    );
  }
}
