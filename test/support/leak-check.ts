/**
 * What a test file may not leave to the next one (vitest.config.ts `setupFiles`: this runs before
 * every file, and its afterAll after the file's own). With isolation off a fork runs file after
 * file in one process, so what one leaves behind would otherwise fail a neighbour, or hide in one:
 * - the environment: a file that changed process.env fails, and the environment is put back;
 * - child processes: a file whose spawned processes still run when it ends fails (they are given
 *   a few seconds to finish exiting, then killed).
 * Modules shared by files keep no state either (test/composition/no-module-state.test.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeEach, expect, inject } from 'vitest';
import { stallLine, watchEventLoop } from './event-loop-stalls.js';

// A recorded run names the suite and the project in each statement it records, and in those of the processes it spawns.
if (process.env.MEDIAFORGE_STATEMENT_RECORD) nameRecordedSuite();

/** A long stall of this fork's event loop is printed with the test it came in (test/support/event-loop-stalls.ts). */
const stopWatching = watchEventLoop((stall) => process.stderr.write(stallLine('a vitest fork', stall, runningTest())));

/**
 * Before each test the fork's event loop turns once (two check phases: a poll phase lies between
 * them), so the main process's replies to the rpc calls vitest made meanwhile are read. Tests that
 * never yield (a generator run through execFileSync, a catalogue loaded from disk) otherwise run
 * one after another on microtasks alone and read no reply; past birpc's fixed 60 s the timers
 * phase, which comes before the poll phase, fails the run with `Timeout calling "onTaskUpdate"`
 * though the reply came long before. Seen on a loaded machine: test/generator/profiles.test.ts
 * held 15 replies unread for 10 to 58 s, and a run failed with 60 such errors.
 */
beforeEach(async () => {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
});

/** The file and test this fork is running, as vitest names them. */
function runningTest(): string {
  const { testPath, currentTestName } = expect.getState();
  return `${testPath ?? '(no file)'} > ${currentTestName ?? '(its hooks or imports)'}`;
}

/** The environment the file started with (vitest's project `env` is already in it). */
const environmentAtStart = { ...process.env };

/** The processes this process started that are still there (Linux's /proc; nothing elsewhere). */
function children(): number[] {
  try {
    return readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** The processes the fork had before the file: not the file's. */
const childrenAtStart = new Set(children());

/**
 * Helper processes a library keeps for the whole process on purpose, started by whichever file
 * first needs them and reused by the next: esbuild's service (a transform) and recheck's agent
 * (the generator's pattern check, issue 20). They hold no state of a file.
 */
const SHARED_HELPERS = [/\/esbuild --service=/, /\/recheck(-[a-z0-9-]+)?\/recheck agent$/];

/** The file's processes still running, but for the shared helpers. */
function liveChildren(): number[] {
  return children().filter((pid) => !childrenAtStart.has(pid) && !SHARED_HELPERS.some((re) => re.test(commandOf(pid))));
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 200);
  } catch {
    return '(gone)';
  }
}

/** Changes to the environment since `before`, as lines; `restore` puts it back. */
export function environmentChanges(before: NodeJS.ProcessEnv, now: NodeJS.ProcessEnv): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(now)]);
  return [...names]
    .filter((name) => before[name] !== now[name])
    .sort()
    .map((name) => (name in before ? (name in now ? `${name} changed` : `${name} removed`) : `${name} added`));
}

afterAll(async () => {
  stopWatching();
  const problems: string[] = [];
  const changed = environmentChanges(environmentAtStart, process.env);
  if (changed.length > 0) {
    problems.push(`the file changed the environment (put back now): ${changed.join(', ')}`);
    for (const name of Object.keys(process.env)) if (!(name in environmentAtStart)) delete process.env[name];
    Object.assign(process.env, environmentAtStart);
  }
  // A process stopped at the file's end may take a moment to go: wait for that, not for a fixed time.
  let left = liveChildren();
  for (let waited = 0; left.length > 0 && waited < 5_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = liveChildren();
  }
  if (left.length > 0) {
    problems.push(`the file left processes running (killed now): ${left.map(commandOf).join('; ')}`);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
  if (problems.length > 0) throw new Error(`leaked to the next file in this fork: ${problems.join('; ')}`);
});

/** The suite and the vitest project (sqlite, postgres, s3, s3-postgres) a recorded run names in its statements. */
function nameRecordedSuite(): void {
  process.env.MEDIAFORGE_STATEMENT_SUITE = expect.getState().testPath;
  const postgres = process.env.MEDIAFORGE_TEST_DB === 'postgres';
  const s3 = Boolean(inject('s3Endpoint'));
  process.env.MEDIAFORGE_STATEMENT_PROJECT = s3 ? (postgres ? 's3-postgres' : 's3') : postgres ? 'postgres' : 'sqlite';
}
