/**
 * Diagnosis only: what one statement's round trip costs a node-postgres client, in its own CPU
 * (what the service's thread pays per statement, before PostgreSQL does anything): a named
 * `SELECT $1::int` sent ROUNDS times on one connection, over TCP to the server of
 * MEDIAFORGE_TEST_PG and, where the machine has it, over PostgreSQL's Unix socket
 * (/var/run/postgresql), alternating.
 *   tsx bench/pg-round-trip.ts [--rounds=2]
 */
import { existsSync } from 'node:fs';
import pg from 'pg';
import { isMain, reachablePostgres } from './support.js';

const QUERIES = 5000;

async function perQuery(config: pg.ClientConfig): Promise<{ wallUs: number; cpuUs: number }> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    const query = (i: number) => client.query({ name: 'round-trip', text: 'SELECT $1::int AS n', values: [i] });
    for (let i = 0; i < 500; i++) await query(i); // warm-up: the statement prepared, the JIT warm
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < QUERIES; i++) await query(i);
    const cpu = process.cpuUsage(cpu0);
    return { wallUs: ((performance.now() - t0) * 1000) / QUERIES, cpuUs: (cpu.user + cpu.system) / QUERIES };
  } finally {
    await client.end();
  }
}

if (isMain(import.meta.url)) {
  const server = await reachablePostgres();
  if (!server) throw new Error('no PostgreSQL answered (MEDIAFORGE_TEST_PG)');
  const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 2);
  const socket = '/var/run/postgresql';
  const url = new URL(server);
  const transports: [string, pg.ClientConfig][] = [['tcp', { connectionString: server }]];
  if (existsSync(socket))
    transports.push([
      'unix',
      { host: socket, user: decodeURIComponent(url.username), database: url.pathname.slice(1) || undefined },
    ]);
  for (let round = 0; round < rounds; round++)
    for (const [name, config] of transports) {
      const { wallUs, cpuUs } = await perQuery(config);
      console.log(`${name}: ${wallUs.toFixed(0)} us per query, ${cpuUs.toFixed(0)} us of this process's CPU`);
    }
}
