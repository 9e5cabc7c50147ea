/**
 * Diagnosis only (issue 42, "PostgreSQL's wait events before and after"): runs a command (a bench
 * on PostgreSQL, in any checkout) and samples `pg_stat_activity` every --every ms while it runs,
 * then prints how the database's backends spent those samples: idle, idle in transaction (waiting
 * for the service's next statement), running, or waiting, by wait event (Lock:transactionid is a
 * row lock such as the wallet's; LWLock:WALWrite and IO:WALSync are commits waiting for the WAL).
 *   tsx bench/pg-waits.ts [--every=50] [--cwd=DIR] -- npx tsx bench/end-to-end.ts --quick --pg
 * Only backends of the sampled database count (MEDIAFORGE_TEST_PG's, by default the bench's), and
 * not this sampler's own connection. Samples taken while no backend of the database exists (the
 * command starting or ending) are not counted.
 */
import { spawn } from 'node:child_process';
import pg from 'pg';
import { isMain, reachablePostgres } from './support.js';

/** One backend at one sample, as the report groups it. */
export function backendClass(row: { state: string | null; wait_event_type: string | null; wait_event: string | null }) {
  if (row.state === 'idle') return 'idle';
  if (row.state === 'idle in transaction') return 'idle in transaction';
  if (row.wait_event_type && row.wait_event_type !== 'Client')
    return `waiting ${row.wait_event_type}:${row.wait_event}`;
  return `running (${row.state ?? 'no state'})`;
}

export async function sampleWaits(url: string, command: string[], every: number, cwd: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const counts = new Map<string, number>();
  let samples = 0;
  const child = spawn(command[0]!, command.slice(1), { cwd, stdio: 'inherit', env: process.env });
  const ended = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  let done = false;
  void ended.then(() => (done = true));
  while (!done) {
    const { rows } = await client.query(
      `SELECT state, wait_event_type, wait_event FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    );
    if (rows.length > 0) {
      samples++;
      for (const row of rows) {
        const key = backendClass(row);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, every));
  }
  await client.end();
  return { code: await ended, samples, counts: [...counts.entries()].sort((a, b) => b[1] - a[1]) };
}

if (isMain(import.meta.url)) {
  const split = process.argv.indexOf('--');
  if (split < 0) throw new Error('usage: tsx bench/pg-waits.ts [--every=50] [--cwd=DIR] -- COMMAND...');
  const options = process.argv.slice(2, split);
  const option = (name: string) => options.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const url = await reachablePostgres();
  if (!url) throw new Error('no PostgreSQL reachable (MEDIAFORGE_TEST_PG)');
  const every = Number(option('every') ?? 50);
  const result = await sampleWaits(url, process.argv.slice(split + 1), every, option('cwd') ?? process.cwd());
  const total = result.counts.reduce((sum, [, n]) => sum + n, 0);
  console.log(`\n${result.samples} samples ${every} ms apart, ${total} backend-samples:`);
  for (const [key, n] of result.counts)
    console.log(`${String(n).padStart(7)}  ${((100 * n) / total).toFixed(1).padStart(5)} %  ${key}`);
  process.exitCode = result.code;
}
