/**
 * Real upstreams (issue 17):
 * - upstreamResultRssGrowthMb: an edge service (`serve --migrate`, SQLite, local blob store)
 *   routes a model to a loopback jobs-protocol server whose result is a 300 MB MP4 made as it is
 *   sent (the movie header after the padding, so the probe walks all of it). The figure is the
 *   edge's peak VmRSS (sampled every 100 ms) while the result streams into its store and is
 *   measured, minus VmRSS before.
 * - upstreamOverheadMs: two real services chained (the edge routes the model to the upstream
 *   through the jobs protocol, no upstream callbacks: the first poll and the next ones are
 *   scheduled from the upstream's hints, Retry-After and progress); for each task, its time at
 *   the edge (created -> finished, the edge's database) minus the same task's time at the
 *   upstream (its database); the figure is the median.
 * - slowResultDownloads (issue 25, N2): an edge routes a model to a loopback jobs-protocol server
 *   whose result drips in over 90 s (support/upstreams/slow-results.ts), with the default lease of
 *   60 s; the figure is how many times the server was asked for the result by the time the task
 *   succeeded (target exactly 1: the lease is renewed while the download runs). --quick keeps the
 *   ratio of download to lease (1.5) at a tenth of the time: a 9 s drip, MEDIAFORGE_LEASE_MS=6000.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDb } from '../runtime/storage/dialect.js';
import { askedClip } from '../support/media/fixtures.js';
import { largeMp4 } from '../support/media/generated-streams.js';
import { JobsProtocolServer } from '../support/upstreams/jobs-protocol-server.js';
import { drip } from '../support/upstreams/slow-results.js';
import {
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
import { rssMb } from '../support/process-memory.js';

const MB = 1000 * 1000;
const RESULT_BYTES = 300 * MB;
// A model without references: a reference is fetched by the check before the run, off this
// machine, and bench services leave the check lane empty (support/service-process.ts), so such a
// task never ran and each call waited out its time box.
const MODEL = 'vendor_d/family_d/text-to-video';
const INPUT = { prompt: 'a lighthouse at dusk' };

function deploymentsFile(dir: string, baseUrl: string, extra = ''): string {
  const file = join(dir, 'deployments.yaml');
  writeFileSync(
    file,
    [
      'upstreams:',
      `  up: { kind: jobs, baseUrl: "${baseUrl}", secretEnv: BENCH_UPSTREAM_KEY${extra} }`,
      'models:',
      `  ${MODEL}:`,
      '    - upstream: up',
    ].join('\n'),
  );
  return file;
}

async function createAndWait(
  base: string,
  key: string,
  prompt: string,
): Promise<{ status: number; taskId?: string; state?: string }> {
  const response = await fetch(`${base}/api/v1/jobs/createTask?wait=60`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, input: { ...INPUT, prompt } }),
  });
  const body = (await response.json()) as { data?: { taskId: string; state: string } };
  return { status: response.status, taskId: body.data?.taskId, state: body.data?.state };
}

async function resultRssGrowth(): Promise<{ growth: number | null; note: string }> {
  const upstream = await new JobsProtocolServer({
    latencyMs: 200,
    apiKey: 'bench-key',
    result: (job) => largeMp4(RESULT_BYTES, askedClip(job.model, job.input, job.seconds)),
  }).start();
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  const edge = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: {
      MEDIAFORGE_DEPLOYMENTS: deploymentsFile(dir, upstream.baseUrl),
      BENCH_UPSTREAM_KEY: 'bench-key',
      MEDIAFORGE_UPSTREAM_POLL_MS: '100',
    },
  });
  try {
    await settle(edge.pid);
    const before = rssMb(edge.pid) ?? 0;
    let peak = before;
    const sampler = setInterval(() => {
      const rss = rssMb(edge.pid);
      if (rss !== undefined && rss > peak) peak = rss;
    }, 100);
    const started = Date.now();
    const outcome = await createAndWait(edge.url, account.apiKey, 'a 300 MB result');
    clearInterval(sampler);
    const seconds = (Date.now() - started) / 1000;
    const ok = outcome.status === 200 && outcome.state === 'succeeded' && upstream.downloads === 1;
    const growth = round(peak - before, 1);
    return {
      growth: ok ? growth : null,
      note: `upstream: a ${RESULT_BYTES / MB} MB result (MP4, movie header after the padding) streamed from a loopback jobs-protocol server into the edge's local store and measured: VmRSS ${before.toFixed(1)} MiB before, peak ${peak.toFixed(1)} MiB (every 100 ms), growth ${growth} MiB, ${seconds.toFixed(1)} s${ok ? '' : `; FAILED (figure null): ${JSON.stringify(outcome)}, downloads ${upstream.downloads}`}`,
    };
  } finally {
    await edge.stop();
    await upstream.close();
  }
}

async function chainedOverhead(mode: RunMode): Promise<{ median: number | null; note: string }> {
  const tasks = mode.quick ? 8 : 20;
  const latencyMs = 1500;
  const upDir = newServiceDir();
  const upDb = sqliteUrl(upDir);
  const [upAccount] = await createAccounts(upDb, 1);
  const upstream = await startService({
    dir: upDir,
    dbUrl: upDb,
    removeDir: true,
    label: 'upstream',
    env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(latencyMs) },
  });
  const edgeDir = newServiceDir();
  const edgeDb = sqliteUrl(edgeDir);
  const [edgeAccount] = await createAccounts(edgeDb, 1);
  const edge = await startService({
    dir: edgeDir,
    dbUrl: edgeDb,
    removeDir: true,
    label: 'edge',
    env: {
      MEDIAFORGE_DEPLOYMENTS: deploymentsFile(edgeDir, `${upstream.url}/api/v1`),
      BENCH_UPSTREAM_KEY: upAccount.apiKey,
    },
  });
  const edgeRows = await openDb(edgeDb);
  const upRows = await openDb(upDb);
  try {
    await settle(edge.pid);
    const overheads: number[] = [];
    const failures: string[] = [];
    // A few at a time, as traffic arrives: each task's two durations come from the two databases.
    for (let i = 0; i < tasks; i += 4) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(4, tasks - i) }, (_, j) =>
          createAndWait(edge.url, edgeAccount.apiKey, `chained ${i + j}`),
        ),
      );
      for (const outcome of batch) {
        if (outcome.status !== 200 || outcome.state !== 'succeeded') {
          failures.push(JSON.stringify(outcome));
          continue;
        }
        const at = await edgeRows.kysely
          .selectFrom('tasks')
          .select(['created_at', 'finished_at', 'deployment_handle'])
          .where('id', '=', outcome.taskId!)
          .executeTakeFirstOrThrow();
        const up = await upRows.kysely
          .selectFrom('tasks')
          .select(['created_at', 'finished_at'])
          .where('id', '=', at.deployment_handle!)
          .executeTakeFirstOrThrow();
        overheads.push(at.finished_at! - at.created_at - (up.finished_at! - up.created_at));
      }
      await sleep(100);
    }
    const median = overheads.length ? round(percentile(overheads, 50), 0) : null;
    return {
      median: failures.length ? null : median,
      note: `upstream: ${tasks} tasks chained edge -> upstream (jobs protocol, no callbacks; upstream simulator ${latencyMs} ms), 4 at a time: edge time minus upstream time per task, median ${median} ms, p90 ${overheads.length ? round(percentile(overheads, 90), 0) : null} ms, min ${Math.min(...overheads)} ms, max ${Math.max(...overheads)} ms${failures.length ? `; FAILED (figure null): ${failures.slice(0, 3).join('; ')}` : ''}`,
    };
  } finally {
    await edgeRows.close();
    await upRows.close();
    await edge.stop();
    await upstream.stop();
  }
}

async function slowResultFetches(mode: RunMode): Promise<{ fetches: number | null; note: string }> {
  const dripSeconds = mode.quick ? 9 : 90;
  const leaseMs = mode.quick ? 6000 : 60_000;
  const upstream = await new JobsProtocolServer({
    latencyMs: 200,
    apiKey: 'bench-key',
    result: (job) => drip(askedClip(job.model, job.input, job.seconds), dripSeconds * 1000, 500),
  }).start();
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  const edge = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: {
      MEDIAFORGE_DEPLOYMENTS: deploymentsFile(dir, upstream.baseUrl),
      BENCH_UPSTREAM_KEY: 'bench-key',
      MEDIAFORGE_UPSTREAM_POLL_MS: '100',
      MEDIAFORGE_LEASE_MS: String(leaseMs),
    },
  });
  try {
    const started = Date.now();
    const created = await createAndWait(edge.url, account.apiKey, 'a result that drips in');
    let state = created.state;
    while (
      created.taskId &&
      (state === 'queued' || state === 'running') &&
      Date.now() - started < 3 * dripSeconds * 1000
    ) {
      await sleep(500);
      const response = await fetch(`${edge.url}/api/v1/jobs/recordInfo?taskId=${created.taskId}`, {
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      state = ((await response.json()) as { data?: { state: string } }).data?.state;
    }
    const seconds = (Date.now() - started) / 1000;
    const ok = state === 'succeeded';
    const { completed, cut } = upstream.results;
    return {
      fetches: ok ? upstream.downloads : null,
      note: `upstream: a result dripped in over ${dripSeconds} s (lease ${leaseMs / 1000} s) from a loopback jobs-protocol server: fetched ${upstream.downloads} time(s) (${completed} completed, ${cut} cut by the edge), task ${state} after ${seconds.toFixed(1)} s${ok ? '' : `; FAILED (figure null): ${JSON.stringify(created)}`}`,
    };
  } finally {
    await edge.stop();
    await upstream.close();
  }
}

export async function benchUpstream(mode: RunMode): Promise<BenchOutput> {
  const rss = await resultRssGrowth();
  const overhead = await chainedOverhead(mode);
  const slow = await slowResultFetches(mode);
  return {
    figures: {
      upstreamResultRssGrowthMb: rss.growth,
      upstreamOverheadMs: overhead.median,
      slowResultDownloads: slow.fetches,
    },
    notes: [rss.note, overhead.note, slow.note],
  };
}

if (isMain(import.meta.url)) {
  const out = await benchUpstream({ quick: process.argv.includes('--quick') });
  for (const note of out.notes) console.log(`- ${note}`);
  console.log(JSON.stringify(out.figures));
}
