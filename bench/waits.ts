/**
 * Held waits: N concurrent createTask calls with `wait=60` on tasks the simulator finishes after
 * 2 s, against a service in its own process. One TCP connection per call (node:http, keep-alive
 * off, no socket limit), all sent at once. For each answer: the time from the task's finish
 * (finishedAt of the record it carries, written by the service's clock on this same machine) to
 * the moment the whole answer has arrived here. The service's RSS is sampled from /proc while the
 * calls are held. A call is lost unless it gets 200 with a terminal record (the client gives up
 * after 150 s of silence on a connection: 60 s of wait plus a generous margin for acceptance).
 */
import { readFileSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { openDb } from '../runtime/storage/dialect.js';
import {
  createAccounts,
  isMain,
  newServiceDir,
  percentile,
  round,
  sqliteUrl,
  startService,
  RUNNING_BODY,
  type BenchOutput,
  type RunMode,
} from './support.js';
import { rssMb } from '../support/process-memory.js';

const TERMINAL = new Set(['succeeded', 'failed', 'expired', 'canceled']);

/** Machine-wide TCP listen-queue counters (/proc/net/netstat): how many connects the kernel turned away or reset. */
function listenCounters(): Record<string, number> {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('TcpExt:'));
    const names = lines[0].split(/\s+/).slice(1);
    const values = lines[1].split(/\s+/).slice(1).map(Number);
    const wanted = ['ListenOverflows', 'SyncookiesSent', 'SyncookiesFailed'];
    return Object.fromEntries(names.map((n, i) => [n, values[i]]).filter(([n]) => wanted.includes(n as string)));
  } catch {
    return {};
  }
}

interface Answer {
  status: number;
  body: string;
  arrivedAt: number;
}

function post(
  agent: Agent,
  url: URL,
  path: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), arrivedAt: Date.now() }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

export async function benchWaits(mode: RunMode & { calls?: number; serviceNodeArgs?: string[] }): Promise<BenchOutput> {
  const calls = mode.calls ?? (mode.quick ? 1000 : 5000);
  const latencyMs = 2000;
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  const service = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(latencyMs) },
    nodeArgs: mode.serviceNodeArgs,
  });
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  let peakRss = 0;
  const baselineRss = rssMb(service.pid) ?? 0;
  const sampler = setInterval(() => {
    const rss = rssMb(service.pid);
    if (rss !== undefined && rss > peakRss) peakRss = rss;
  }, 50);
  try {
    const url = new URL(service.url);
    const headers = { authorization: `Bearer ${account.apiKey}` };
    const countersBefore = listenCounters();
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: calls }, () =>
        post(agent, url, '/api/v1/jobs/createTask?wait=60', headers, RUNNING_BODY, 150_000).catch((error: Error) => ({
          status: 0,
          body: error.message,
          arrivedAt: Date.now(),
        })),
      ),
    );
    const finished = Date.now();
    const countersAfter = listenCounters();
    const tcp = Object.entries(countersAfter)
      .map(([name, value]) => `${name} +${value - (countersBefore[name] ?? 0)}`)
      .join(', ');
    const db = await openDb(dbUrl);
    const created = Number(
      (
        await db.kysely
          .selectFrom('tasks')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    await db.close();
    const failedAt: number[] = [];
    const afterFinish: number[] = [];
    let lost = 0;
    const problems = new Map<string, number>();
    let firstFinish = Infinity;
    let lastFinish = 0;
    for (const answer of answers) {
      let state: string | undefined;
      let finishedAt: number | undefined;
      try {
        const parsed = JSON.parse(answer.body) as { data?: { state?: string; finishedAt?: string | null } };
        state = parsed.data?.state;
        finishedAt = parsed.data?.finishedAt ? Date.parse(parsed.data.finishedAt) : undefined;
      } catch {
        /* not JSON */
      }
      if (answer.status !== 200 || !state || !TERMINAL.has(state) || finishedAt === undefined) {
        lost++;
        failedAt.push(answer.arrivedAt - started);
        const key = `${answer.status} ${state ?? answer.body.slice(0, 80)}`;
        problems.set(key, (problems.get(key) ?? 0) + 1);
        continue;
      }
      afterFinish.push(answer.arrivedAt - finishedAt);
      firstFinish = Math.min(firstFinish, finishedAt);
      lastFinish = Math.max(lastFinish, finishedAt);
    }
    return {
      figures: {
        waitP99MsAfterFinish: round(percentile(afterFinish, 99), 1),
        waitP50MsAfterFinish: round(percentile(afterFinish, 50), 1),
        waitMaxMsAfterFinish: round(Math.max(...afterFinish), 1),
        waitRssMb: round(peakRss, 1),
        waitBaselineRssMb: round(baselineRss, 1),
        waitLost: lost,
        waitCalls: calls,
        waitSeconds: round((finished - started) / 1000, 2),
      },
      notes: [
        `waits: ${calls} concurrent createTask?wait=60, one connection each, simulator latency ${latencyMs} ms; tasks finished over ${round((lastFinish - firstFinish) / 1000, 2)} s, all answers within ${round((finished - started) / 1000, 2)} s; RSS peak sampled every 50 ms (${round(baselineRss, 1)} MiB idle)` +
          `; ${created} tasks created; kernel listen counters (machine-wide) ${tcp || 'n/a'}` +
          (problems.size
            ? `; lost: ${JSON.stringify(Object.fromEntries(problems))}, between ${Math.min(...failedAt)} and ${Math.max(...failedAt)} ms after the calls were sent`
            : ''),
      ],
    };
  } finally {
    clearInterval(sampler);
    agent.destroy();
    await service.stop();
  }
}

if (isMain(import.meta.url)) {
  const callsArg = process.argv.find((a) => /^--calls=\d+$/.test(a));
  console.log(
    JSON.stringify(
      await benchWaits({
        quick: process.argv.includes('--quick'),
        calls: callsArg ? Number(callsArg.split('=')[1]) : undefined,
      }),
    ),
  );
}
