/**
 * Starts the ceiling server (bench/ceiling-server.ts) as its own process on a service's SQLite
 * file, with the service's secret, logging into the service's directory: what a minimal Fastify +
 * better-sqlite3 server reaches doing recordInfo's and quote's work, loaded beside the service.
 */
import { join } from 'node:path';
import { freePort, ROOT, SERVICE_SECRET, spawnHttpProcess, type Spawned } from './support.js';

export async function startCeilingServer(service: { dir: string; dbUrl: string }): Promise<Spawned> {
  if (!service.dbUrl.startsWith('sqlite:')) throw new Error('the ceiling server reads a SQLite file');
  const port = await freePort();
  return spawnHttpProcess(['--import', 'tsx', join(ROOT, 'bench/ceiling-server.ts')], {
    env: {
      ...process.env,
      PORT: String(port),
      DB_FILE: service.dbUrl.slice('sqlite:'.length),
      SECRET: SERVICE_SECRET,
    },
    port,
    logPath: join(service.dir, `ceiling-${port}.log`),
    readyPath: '/healthz',
    label: 'ceiling server (Fastify + better-sqlite3)',
  });
}
