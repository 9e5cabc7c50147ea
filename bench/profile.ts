/**
 * Profiles the service process under one benchmark's load with node --cpu-prof and prints the top
 * self-time functions (and the top files) of the profile it writes on exit.
 *   tsx bench/profile.ts createTask|quote|recordInfo [--seconds=N] [--top=N]
 *   tsx bench/profile.ts webhooks|waits|ranges
 *   tsx bench/profile.ts end-to-end [--pg]   (the tail: tasks created and run to the end, one engine)
 *   tsx bench/profile.ts backlog [--tasks=N]   (the process draining a backlog while the API is loaded)
 *   tsx bench/profile.ts summarize FILE.cpuprofile
 *   tsx bench/profile.ts sql createTask|quote|recordInfo|end-to-end [--pg] [--seconds=N]   (time per SQL statement, via
 *     bench/sqlstats.ts; end-to-end --pg: per statement sent by node-postgres, via bench/pgstats.ts)
 * Profiles go to /tmp/mediaforge-profile-<time>/ and are kept for a closer look (Chrome DevTools,
 * speedscope).
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  cannon,
  cannonOptions,
  createAccounts,
  isMain,
  newServiceDir,
  ROOT,
  sqliteUrl,
  startService,
  TYPICAL_BODY,
} from './support.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function where(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  return path.startsWith(ROOT) ? relative(ROOT, path) : path || '(native)';
}

/** Self time by function and by file, in ms and percent of the profiled time. */
export function summarize(file: string, top = 25, window?: { fromMs: number; toMs: number }): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  // Only the samples inside the window (ms after the profile starts): the load, not the start-up.
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at / 1000 < window.fromMs || at / 1000 > window.toMs)) continue;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, us] of self) {
    const { callFrame } = byId.get(id)!;
    const file = where(callFrame.url);
    const fn = `${callFrame.functionName || '(anonymous)'}  ${file}${callFrame.url ? `:${callFrame.lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const group = file.includes('node_modules/')
      ? file.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, 'node_modules/$1')
      : file;
    byFile.set(group, (byFile.get(group) ?? 0) + us);
  }
  const rows = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(
        ([name, us]) =>
          `${(us / 1000).toFixed(0).padStart(7)} ms ${((us * 100) / total).toFixed(1).padStart(5)} %  ${name}`,
      )
      .join('\n');
  // Inclusive time of the project's own functions (their callees included, up to the last await).
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { callFrame } = byId.get(at)!;
      const file = where(callFrame.url);
      if (!/^(runtime|generated|bench)\//.test(file)) continue;
      const fn = `${callFrame.functionName || '(anonymous)'}  ${file}:${callFrame.lineNumber + 1}`;
      if (seen.has(fn)) continue;
      seen.add(fn);
      inclusive.set(fn, (inclusive.get(fn) ?? 0) + us);
    }
  }
  const idle = byFunction.get('(idle)  (native)') ?? 0;
  return `${file}: ${(total / 1e6).toFixed(1)} s sampled, ${((idle * 100) / total).toFixed(0)} % idle\n\ntop self time by function:\n${rows(byFunction, top)}\n\nby file / package:\n${rows(byFile, 15)}\n\nproject functions, inclusive (callees up to the next await):\n${rows(inclusive, top)}`;
}

export async function profileEndpoint(
  endpoint: 'createTask' | 'quote' | 'recordInfo',
  seconds: number,
  dir: string,
  sqlStats?: string,
): Promise<{ label: string; window: { fromMs: number; toMs: number } }> {
  const serviceDir = newServiceDir();
  const dbUrl = sqliteUrl(serviceDir);
  const [account] = await createAccounts(dbUrl, 1);
  const spawnedAt = Date.now();
  const service = sqlStats
    ? await startService({
        dir: serviceDir,
        dbUrl,
        removeDir: true,
        env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000), MEDIAFORGE_SQLSTATS_FILE: sqlStats },
        nodeArgs: ['--import', 'tsx', '--import', './bench/sqlstats.ts'],
      })
    : await startService({
        dir: serviceDir,
        dbUrl,
        removeDir: true,
        env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000) },
        nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
      });
  try {
    const auth = { authorization: `Bearer ${account.apiKey}` };
    const created = await fetch(`${service.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: TYPICAL_BODY,
    });
    const taskId = ((await created.json()) as { data: { taskId: string } }).data.taskId;
    const shape =
      endpoint === 'createTask'
        ? {
            method: 'POST' as const,
            path: '/api/v1/jobs/createTask',
            headers: auth,
            body: TYPICAL_BODY,
            uniqueIdempotencyKey: true,
          }
        : endpoint === 'quote'
          ? { method: 'POST' as const, path: '/api/v1/jobs/quote', headers: auth, body: TYPICAL_BODY }
          : { method: 'GET' as const, path: `/api/v1/jobs/recordInfo?taskId=${taskId}`, headers: auth };
    await cannon(cannonOptions(service.url, shape, 50, 2)); // warm-up, outside the window
    const loadFrom = Date.now() - spawnedAt;
    const r = await cannon(cannonOptions(service.url, shape, 50, seconds));
    const loadTo = Date.now() - spawnedAt;
    return {
      label: `${endpoint}: ${r.rps.toFixed(0)} req/s (${JSON.stringify(r.statusCodes)}) p50 ${r.p50Ms} ms p99 ${r.p99Ms} ms; profile window ${loadFrom}-${loadTo} ms after spawn`,
      window: { fromMs: loadFrom, toMs: loadTo },
    };
  } finally {
    await service.stop();
  }
}

if (isMain(import.meta.url)) {
  const [what, arg] = process.argv.slice(2);
  const option = (name: string, fallback: number) =>
    Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  if (what === 'summarize') {
    console.log(summarize(arg, option('top', 25)));
  } else if (what === 'sql') {
    const file = `/tmp/mediaforge-sqlstats-${Date.now()}.json`;
    let label: string;
    if (arg === 'end-to-end') {
      const { benchEndToEnd } = await import('./end-to-end.js');
      const pg = process.argv.includes('--pg');
      const { figures } = await benchEndToEnd({
        quick: true,
        only: pg ? 'pg' : 'sqlite',
        serviceEnv: { MEDIAFORGE_SQLSTATS_FILE: file },
        // PostgreSQL: each statement's round trip, counted in node-postgres (bench/pgstats.ts).
        serviceNodeArgs: ['--import', 'tsx', '--import', pg ? './bench/pgstats.ts' : './bench/sqlstats.ts'],
      });
      label = JSON.stringify(figures);
    } else ({ label } = await profileEndpoint(arg as 'createTask', option('seconds', 10), '/tmp', file));
    const rows = JSON.parse(readFileSync(file, 'utf8')) as {
      sql: string;
      calls: number;
      ms: number;
      prepares: number;
      prepareMs: number;
    }[];
    const total = rows.reduce((a, r) => a + r.ms + r.prepareMs, 0);
    console.log(
      `${label}\n(whole process life, warm-up included) ${rows.reduce((a, r) => a + r.calls, 0)} statements, ${total.toFixed(0)} ms in SQLite, of which prepare() ${rows.reduce((a, r) => a + r.prepareMs, 0).toFixed(0)} ms\n`,
    );
    console.log('  run ms  prep ms   calls  statement');
    for (const r of rows.slice(0, option('top', 25)))
      console.log(
        `${r.ms.toFixed(0).padStart(8)} ${r.prepareMs.toFixed(0).padStart(8)} ${String(r.calls).padStart(7)}  ${r.sql.slice(0, 140)}`,
      );
  } else {
    const dir = `/tmp/mediaforge-profile-${Date.now()}`;
    mkdirSync(dir, { recursive: true });
    let label = '';
    let window: { fromMs: number; toMs: number } | undefined;
    if (what === 'createTask' || what === 'quote' || what === 'recordInfo')
      ({ label, window } = await profileEndpoint(what, option('seconds', 10), dir));
    else if (what === 'webhooks') {
      const { benchWebhooks } = await import('./webhooks.js');
      label = JSON.stringify(
        (
          await benchWebhooks({
            quick: true,
            deliveries: option('deliveries', 1000),
            serviceNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
          })
        ).figures,
      );
    } else if (what === 'end-to-end') {
      const { benchEndToEnd } = await import('./end-to-end.js');
      label = JSON.stringify(
        (
          await benchEndToEnd({
            quick: true,
            only: process.argv.includes('--pg') ? 'pg' : 'sqlite',
            serviceNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
          })
        ).figures,
      );
    } else if (what === 'backlog') {
      const { benchBacklog } = await import('./backlog.js');
      label = JSON.stringify(
        (
          await benchBacklog({
            quick: true,
            tasks: option('tasks', 5000),
            serviceNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
          })
        ).figures,
      );
    } else if (what === 'waits') {
      const { benchWaits } = await import('./waits.js');
      label = JSON.stringify(
        (
          await benchWaits({
            quick: true,
            calls: option('calls', 2000),
            serviceNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
          })
        ).figures,
      );
    } else if (what === 'ranges') {
      const { benchMediaRanges } = await import('./media-ranges.js');
      label = JSON.stringify(
        (await benchMediaRanges({ quick: true, serviceNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] })).figures,
      );
    } else
      throw new Error(
        'usage: tsx bench/profile.ts createTask|quote|recordInfo|webhooks|end-to-end|backlog|waits|ranges [--seconds=N] | summarize FILE',
      );
    console.log(label);
    // One profile per thread: the main thread serves; tsx's loader thread idles (left out).
    const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
    for (const file of files) {
      const text = summarize(join(dir, file), option('top', 25), window);
      if (/sampled, (9\d|100) % idle/.test(text))
        console.log(`\n${join(dir, file)}: an idle thread (the tsx loader), left out`);
      else console.log(`\n${text}`);
    }
  }
}
