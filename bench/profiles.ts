/**
 * Provider profiles (issue 27): a real `mediaforge serve --migrate` on SQLite whose deployments
 * file routes one model to `kind: runway` (spec/providers/runway.yaml, executed by the one profile
 * adapter) at a loopback Runway server (support/upstreams/vendors/runway-server.ts, in this process).
 * - profileOverheadMs: per task, its time end to end (created -> finished, the service's database)
 *   minus the server's own generation time for the job (its latencyMs: 1,500 ms from submit to
 *   SUCCEEDED); the median over 20 tasks (8 with --quick), 4 at a time. The adapter polls at
 *   MEDIAFORGE_UPSTREAM_POLL_MS (the first poll at half of it, at least 100 ms): 200 here.
 * - profilePollsPerSec: 2,000 tasks (300 with --quick) whose Runway jobs never end within the run
 *   (an hour of generation), MEDIAFORGE_UPSTREAM_POLL_MS=1000: once the server holds every job, the
 *   status requests it answers over a steady window (15 s; 5 s with --quick) per second. One poll
 *   a second per job is the ceiling (2,000/s); the target, 1,500/s, says the process keeps up.
 *   The task lane is raised as an operator would for that many long jobs: MEDIAFORGE_WORKER_CONCURRENCY
 *   and MEDIAFORGE_WORKER_ACCOUNT_CAP (the tasks come from 8 accounts). With --quick the ceiling is
 *   300/s, under the target: profilePollsOfCeiling (the rate / one poll a second per job, 0.75 at the
 *   full run's target) is the figure to compare across modes.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDb } from '../runtime/storage/dialect.js';
import { summarize } from './profile.js';
import { RunwayServer } from '../support/upstreams/vendors/runway-server.js';
import {
  cpuMs,
  createAccounts,
  isMain,
  newServiceDir,
  percentile,
  round,
  settle,
  sleep,
  sqliteUrl,
  startService,
  type BenchOutput,
  type RunMode,
} from './support.js';

/** ms the service's main thread ran and waited for a core (Linux /proc/<pid>/schedstat, ns): how much the shared machine held it back. */
function schedMs(pid: number): { ran: number; waited: number } {
  try {
    const [ran, waited] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { ran: ran / 1e6, waited: waited / 1e6 };
  } catch {
    return { ran: NaN, waited: NaN };
  }
}

const MODEL = 'vendor_b/family_c-2.6/text-to-video';
const KEY = 'key_runway_bench';

function deploymentsFile(dir: string, baseUrl: string): string {
  const file = join(dir, 'deployments.yaml');
  writeFileSync(
    file,
    [
      'upstreams:',
      `  rw: { kind: runway, baseUrl: "${baseUrl}", secretEnv: BENCH_RUNWAY_KEY }`,
      'models:',
      `  ${MODEL}:`,
      '    - { upstream: rw, upstreamModel: gen4_turbo }',
    ].join('\n'),
  );
  return file;
}

async function createTask(
  base: string,
  key: string,
  prompt: string,
  wait: boolean,
): Promise<{ status: number; taskId?: string; state?: string }> {
  const response = await fetch(`${base}/api/v1/jobs/createTask${wait ? '?wait=60' : ''}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, input: { prompt } }),
  });
  const body = (await response.json()) as { data?: { taskId: string; state: string } };
  return { status: response.status, taskId: body.data?.taskId, state: body.data?.state };
}

async function overhead(mode: RunMode): Promise<{ median: number | null; note: string }> {
  const tasks = mode.quick ? 8 : 20;
  const latencyMs = 1500;
  const pollMs = 200;
  const runway = await new RunwayServer({ latencyMs, apiKey: KEY }).start();
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  const service = await startService({
    dir,
    dbUrl,
    removeDir: true,
    label: 'profile service',
    env: {
      MEDIAFORGE_DEPLOYMENTS: deploymentsFile(dir, runway.baseUrl),
      BENCH_RUNWAY_KEY: KEY,
      MEDIAFORGE_UPSTREAM_POLL_MS: String(pollMs),
    },
  });
  const rows = await openDb(dbUrl);
  try {
    await settle(service.pid);
    const overheads: number[] = [];
    const failures: string[] = [];
    for (let i = 0; i < tasks; i += 4) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(4, tasks - i) }, (_, j) =>
          createTask(service.url, account.apiKey, `a lighthouse at dusk ${i + j}`, true),
        ),
      );
      for (const outcome of batch) {
        if (outcome.status !== 200 || outcome.state !== 'succeeded') {
          failures.push(JSON.stringify(outcome));
          continue;
        }
        const at = await rows.kysely
          .selectFrom('tasks')
          .select(['created_at', 'finished_at'])
          .where('id', '=', outcome.taskId!)
          .executeTakeFirstOrThrow();
        overheads.push(at.finished_at! - at.created_at - latencyMs);
      }
      await sleep(100);
    }
    const median = overheads.length ? round(percentile(overheads, 50), 0) : null;
    return {
      median: failures.length ? null : median,
      note: `profiles: ${tasks} tasks through the runway profile (serve --migrate, SQLite, MEDIAFORGE_UPSTREAM_POLL_MS=${pollMs}) at a loopback Runway whose jobs take ${latencyMs} ms, 4 at a time: task time (created -> finished) minus ${latencyMs} ms, median ${median} ms, p90 ${overheads.length ? round(percentile(overheads, 90), 0) : null} ms, min ${Math.min(...overheads)} ms, max ${Math.max(...overheads)} ms; server: ${runway.submits.length} submits, ${runway.polls} polls, ${runway.downloads} downloads${failures.length ? `; FAILED (figure null): ${failures.slice(0, 3).join('; ')}` : ''}`,
    };
  } finally {
    await rows.close();
    await service.stop();
    await runway.close();
  }
}

/** Diagnosis only (never in the figures): node --cpu-prof into a directory, or bench/sqlstats.ts's statement times into a file. */
interface Diagnosis {
  profileDir?: string;
  sqlStatsFile?: string;
  /** A preload for the service (`--preload=bench/no-request-log-preload.ts`): a proposed change measured from outside. */
  preload?: string;
}

async function pollRate(
  mode: RunMode,
  diagnosis: Diagnosis = {},
): Promise<{ rate: number | null; ofCeiling: number | null; note: string }> {
  const jobs = mode.quick ? 300 : 2000;
  const windowMs = mode.quick ? 5000 : 15_000;
  const accounts = 8;
  const concurrency = 256;
  const accountCap = 64;
  // An hour of generation, running from the start: every status answer is RUNNING with progress.
  const { profileDir } = diagnosis;
  let window: { fromMs: number; toMs: number } | undefined;
  const runway = await new RunwayServer({ latencyMs: 3_600_000, queuedMs: 0, apiKey: KEY }).start();
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const keys = await createAccounts(dbUrl, accounts);
  const spawnedAt = Date.now();
  const service = await startService({
    nodeArgs: [
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      ...(diagnosis.sqlStatsFile || diagnosis.preload ? ['--import', 'tsx'] : []),
      ...(diagnosis.sqlStatsFile ? ['--import', './bench/sqlstats.ts'] : []),
      ...(diagnosis.preload ? ['--import', `./${diagnosis.preload}`] : []),
    ],
    dir,
    dbUrl,
    removeDir: true,
    label: 'profile service',
    env: {
      MEDIAFORGE_DEPLOYMENTS: deploymentsFile(dir, runway.baseUrl),
      BENCH_RUNWAY_KEY: KEY,
      MEDIAFORGE_UPSTREAM_POLL_MS: '1000',
      MEDIAFORGE_WORKER_CONCURRENCY: String(concurrency),
      MEDIAFORGE_WORKER_ACCOUNT_CAP: String(accountCap),
      ...(diagnosis.sqlStatsFile ? { MEDIAFORGE_SQLSTATS_FILE: diagnosis.sqlStatsFile } : {}),
    },
  });
  try {
    await settle(service.pid);
    const started = Date.now();
    let refused = 0;
    for (let i = 0; i < jobs; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, jobs - i) }, (_, j) =>
          createTask(service.url, keys[(i + j) % accounts].apiKey, `a long shot ${i + j}`, false),
        ),
      );
      refused += batch.filter((b) => b.status !== 202).length;
    }
    const createdSeconds = (Date.now() - started) / 1000;
    // Every job at the server (the worker submits them from its task lane), at most a minute.
    while (runway.jobs.size < jobs - refused && Date.now() - started < 60_000) await sleep(100);
    const submittedSeconds = (Date.now() - started) / 1000;
    const allSubmitted = refused === 0 && runway.jobs.size === jobs;
    // Two poll periods for the polls of the last submits to spread over the second.
    await sleep(2000);
    const polls0 = runway.polls;
    const cpu0 = cpuMs(service.pid) ?? 0;
    const sched0 = schedMs(service.pid);
    const t0 = Date.now();
    await sleep(windowMs);
    const polls = runway.polls - polls0;
    const seconds = (Date.now() - t0) / 1000;
    const cpu = ((cpuMs(service.pid) ?? 0) - cpu0) / (seconds * 1000);
    const sched1 = schedMs(service.pid);
    const rate = round(polls / seconds, 0);
    window = { fromMs: t0 - spawnedAt, toMs: t0 - spawnedAt + windowMs };
    const cpuPerPoll = ((cpuMs(service.pid) ?? 0) - cpu0) / Math.max(1, polls);
    return {
      rate: allSubmitted ? rate : null,
      ofCeiling: allSubmitted ? round(polls / seconds / jobs, 3) : null,
      note: `profiles: ${jobs} tasks from ${accounts} accounts (created in ${createdSeconds.toFixed(1)} s, ${refused} refused) whose Runway jobs never end in the run, MEDIAFORGE_UPSTREAM_POLL_MS=1000, MEDIAFORGE_WORKER_CONCURRENCY=${concurrency}, MEDIAFORGE_WORKER_ACCOUNT_CAP=${accountCap}: ${runway.jobs.size} jobs at the server after ${submittedSeconds.toFixed(1)} s; then, 2 s later, ${polls} status requests in ${seconds.toFixed(1)} s = ${rate}/s (ceiling ${jobs}/s), service CPU ${(cpu * 100).toFixed(0)} % of a core (${cpuPerPoll.toFixed(2)} ms a poll; its main thread ran ${((sched1.ran - sched0.ran) / 1000).toFixed(1)} s and waited for a core ${((sched1.waited - sched0.waited) / 1000).toFixed(1)} s of the window)${allSubmitted ? '' : '; FAILED (figure null): not every job reached the server'}`,
    };
  } finally {
    await service.stop();
    await runway.close();
    if (profileDir) {
      const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
      if (file) console.log(summarize(join(profileDir, file), 30, window));
    }
    if (diagnosis.sqlStatsFile)
      console.log(`server: ${runway.polls} polls in all; SQL statement times in ${diagnosis.sqlStatsFile}`);
  }
}

/** `--cpu-prof=DIR`, `--sqlstats=FILE` or `--preload=FILE`: only the poll figure, its service under a diagnosis (see Diagnosis). */
export async function benchProfiles(mode: RunMode, diagnosis: Diagnosis = {}): Promise<BenchOutput> {
  const diagnosing = Object.values(diagnosis).some((value) => value !== undefined);
  const over = diagnosing ? undefined : await overhead(mode);
  const polls = await pollRate(mode, diagnosis);
  const pollFigures = { profilePollsPerSec: polls.rate, profilePollsOfCeiling: polls.ofCeiling };
  if (!over) return { figures: pollFigures, notes: [polls.note] };
  return {
    figures: { profileOverheadMs: over.median, ...pollFigures },
    notes: [over.note, polls.note],
  };
}

if (isMain(import.meta.url)) {
  const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const out = await benchProfiles(
    { quick: process.argv.includes('--quick') },
    { profileDir: option('cpu-prof'), sqlStatsFile: option('sqlstats'), preload: option('preload') },
  );
  for (const note of out.notes) console.log(`- ${note}`);
  console.log(JSON.stringify(out.figures));
}
