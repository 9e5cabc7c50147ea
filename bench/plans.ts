/**
 * Diagnosis (not a figure): the query plan of every SQL statement a service runs on a grown
 * database. `tsx bench/plans.ts [--tasks=N] [--seed=FILE]` seeds N finished tasks (bench/seed.ts;
 * default 1,000,000) or copies FILE, runs the service on it with bench/sqlstats.ts preloaded, sends
 * creates (tasks that finish), record reads, listings (first page, deep cursor), a replayed
 * Idempotency-Key and a purge, then prints EXPLAIN QUERY PLAN of each statement the service ran,
 * with its calls and time, worst first. A plan line with SCAN over a table that grows is a finding.
 */
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDb } from '../runtime/storage/dialect.js';
import { seedFinishedTasks, type Seeded } from './seed.js';
import { isMain, newServiceDir, RUNNING_BODY, sleep, sqliteUrl, startService } from './support.js';

interface StatementStat {
  sql: string;
  calls: number;
  ms: number;
}

export async function statementPlans(options: { tasks: number; seed?: string; seeded?: Seeded }) {
  const dir = newServiceDir();
  const path = join(dir, 'db.sqlite');
  let seeded: Seeded;
  if (options.seed && options.seeded) {
    copyFileSync(options.seed, path);
    seeded = options.seeded;
  } else seeded = await seedFinishedTasks(path, options.tasks);
  const statsFile = join(dir, 'sqlstats.json');
  const service = await startService({
    dir,
    env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: '200', MEDIAFORGE_SQLSTATS_FILE: statsFile },
    nodeArgs: ['--import', 'tsx', '--import', './bench/sqlstats.ts'],
  });
  try {
    const auth = { authorization: `Bearer ${seeded.account.apiKey}` };
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${service.url}/api/v1/jobs/createTask`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': `plans-${i}` },
        body: RUNNING_BODY,
      });
      ids.push(((await r.json()) as { data: { taskId: string } }).data.taskId);
    }
    await fetch(`${service.url}/api/v1/jobs/createTask`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'plans-0' },
      body: RUNNING_BODY,
    });
    await sleep(3000);
    for (const id of ids)
      await (await fetch(`${service.url}/api/v1/jobs/recordInfo?taskId=${id}`, { headers: auth })).text();
    let cursor: string | null = null;
    for (let page = 0; page < 3; page++) {
      const r: Response = await fetch(`${service.url}/api/v1/jobs?limit=20${cursor ? `&cursor=${cursor}` : ''}`, {
        headers: auth,
      });
      cursor = ((await r.json()) as { data: { nextCursor: string | null } }).data.nextCursor;
    }
    await (await fetch(`${service.url}/api/v1/chat/credit`, { headers: auth })).text();
    await (
      await fetch(`${service.url}/api/v1/jobs/purge`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ taskId: ids[0] }),
      })
    ).text();
    await sleep(2500); // the preload writes its totals every 2 s
  } finally {
    await service.stop(5000).catch(() => {});
  }
  const stats = JSON.parse(readFileSync(statsFile, 'utf8')) as StatementStat[];
  const db = await openDb(sqliteUrl(dir));
  try {
    const out: { sql: string; calls: number; ms: number; plan: string[] }[] = [];
    for (const s of stats) {
      if (!/^\s*(select|update|delete|insert|with)/i.test(s.sql)) continue;
      try {
        const statement = db.sqlite!.prepare(`EXPLAIN QUERY PLAN ${s.sql}`);
        const params = Array.from({ length: (s.sql.match(/\?/g) ?? []).length }, () => null);
        const rows = statement.all(...params) as { detail: string }[];
        out.push({ sql: s.sql, calls: s.calls, ms: s.ms, plan: rows.map((r) => r.detail) });
      } catch (error) {
        out.push({ sql: s.sql, calls: s.calls, ms: s.ms, plan: [`(no plan: ${(error as Error).message})`] });
      }
    }
    return out;
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const tasks = Number(process.argv.find((a) => a.startsWith('--tasks='))?.slice(8) ?? 1_000_000);
  const seed = process.argv.find((a) => a.startsWith('--seed='))?.slice(7);
  const seeded = seed ? (JSON.parse(readFileSync(`${seed}.json`, 'utf8')) as Seeded) : undefined;
  for (const p of await statementPlans({ tasks, seed, seeded })) {
    console.log(`\n${p.calls} calls, ${p.ms.toFixed(1)} ms: ${p.sql.replace(/\s+/g, ' ').slice(0, 400)}`);
    for (const line of p.plan) console.log(`   ${line}`);
  }
}
