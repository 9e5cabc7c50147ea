/**
 * Diagnosis only (issue 30 step 3): what Fastify costs on recordInfo. One process runs the service
 * (`createService`, role api, SQLite, its logger at info into a file as `serve` logs) and beside its
 * Fastify app a node:http server answering the same GET recordInfo with the same work: the same
 * Authenticator (cached key, key revision), the same task read and record, the envelope, the same
 * security headers, X-Request-Id and Cache-Control; no rate limit, metrics or access line (what the
 * Fastify side adds beside Fastify itself is named in the output), and a third server, a bare
 * Fastify instance (no logger, no plugin, no hook) with one route doing that same work: Fastify
 * itself. autocannon runs in a child process, so this process's CPU time per answered request is
 * the server's alone; runs F N M M N F F M N.
 *   tsx bench/fastify-vs-node-http.ts [--seconds=5] [--no-log]
 */
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Fastify, { type FastifyRequest } from 'fastify';
import { configFromEnv } from '../runtime/config.js';
import { Authenticator } from '../runtime/http/auth.js';
import { securityHeaders } from '../runtime/http/security-headers.js';
import { newId } from '../runtime/ids.js';
import { createService } from '../runtime/service.js';
import { taskOfCaller } from '../runtime/tasks/task-queries.js';
import { taskRecord } from '../runtime/tasks/task-record.js';
import { ApiError } from '../runtime/errors.js';
import { createAccounts, createOneTask, newServiceDir, ROOT, sqliteUrl } from './support.js';

const seconds = Number(process.argv.find((a) => a.startsWith('--seconds='))?.split('=')[1] ?? 5);
const dir = newServiceDir();
const dbUrl = sqliteUrl(dir);
const [account] = await createAccounts(dbUrl, 1);
const config = configFromEnv({
  MEDIAFORGE_DB: dbUrl,
  MEDIAFORGE_DATA_DIR: dir,
  MEDIAFORGE_SECRET: 'bench-secret',
  MEDIAFORGE_ROLE: 'api',
  MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '1000000000',
});
// --no-log: the service's app without its logger (no access line), to apportion F's cost.
const logger = !process.argv.includes('--no-log');
const service = await createService(config, { logger });
const fastifyUrl = await service.app!.listen({ port: 0, host: '127.0.0.1' });
config.publicUrl = fastifyUrl;
const taskId = await createOneTask(fastifyUrl, account.apiKey);

const { ctx } = service;
const authenticator = new Authenticator(ctx);
const security = Object.entries(securityHeaders(config));
/** recordInfo's work outside the service's app: the caller, the task, its record in the envelope (or an error status). */
async function recordInfo(url: string, authorization: FastifyRequest, id: string): Promise<[number, string]> {
  try {
    const query = new URL(url, 'http://x');
    if (query.pathname !== '/api/v1/jobs/recordInfo') throw new ApiError('route_not_found');
    const caller = await authenticator.authenticate(authorization);
    const row = await taskOfCaller(ctx, caller, query.searchParams.get('taskId'));
    return [200, JSON.stringify({ code: 200, msg: 'success', data: taskRecord(ctx, row, 'en'), request_id: id })];
  } catch (error) {
    return [error instanceof ApiError ? 400 : 500, ''];
  }
}
const node = createServer((request: IncomingMessage, response: ServerResponse) => {
  for (const [name, value] of security) response.setHeader(name, value);
  const id = newId('req');
  response.setHeader('X-Request-Id', id);
  void recordInfo(request.url ?? '/', request as unknown as FastifyRequest, id).then(([status, body]) => {
    response.writeHead(status, { 'Cache-Control': 'no-store', 'Content-Type': 'application/json; charset=utf-8' });
    response.end(body);
  });
});
const minimal = Fastify({ logger: false, genReqId: () => newId('req') });
minimal.get('/api/v1/jobs/recordInfo', async (request, reply) => {
  for (const [name, value] of security) reply.raw.setHeader(name, value);
  reply.header('X-Request-Id', request.id).header('Cache-Control', 'no-store');
  const [status, body] = await recordInfo(request.url, request, request.id);
  return reply.status(status).type('application/json; charset=utf-8').send(body);
});
const minimalUrl = await minimal.listen({ port: 0, host: '127.0.0.1' });
await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
const nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;

const run = promisify(execFile);
const path = `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`;
/** One autocannon run from a child process; this process's CPU ms per 2xx answer. */
async function load(url: string, secs: number) {
  const before = process.cpuUsage();
  const { stdout } = await run(
    join(ROOT, 'node_modules/.bin/autocannon'),
    ['-c', '50', '-d', String(secs), '-j', '-H', `authorization=Bearer ${account.apiKey}`, `${url}${path}`],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const used = process.cpuUsage(before);
  const result = JSON.parse(stdout) as { '2xx': number; non2xx: number };
  if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} answers not 2xx`);
  return { ok: result['2xx'], cpuMs: (used.user + used.system) / 1000 };
}

try {
  await load(fastifyUrl, 2);
  await load(nodeUrl, 2);
  await load(minimalUrl, 2);
  const urls = { F: fastifyUrl, N: nodeUrl, M: minimalUrl };
  const sum = { F: { ok: 0, cpuMs: 0 }, N: { ok: 0, cpuMs: 0 }, M: { ok: 0, cpuMs: 0 } };
  const runs: string[] = [];
  for (const kind of ['F', 'N', 'M', 'M', 'N', 'F', 'F', 'M', 'N'] as const) {
    const r = await load(urls[kind], seconds);
    sum[kind].ok += r.ok;
    sum[kind].cpuMs += r.cpuMs;
    runs.push(`${kind} ${(r.ok / seconds).toFixed(0)}/s ${((r.cpuMs * 1000) / r.ok).toFixed(0)} µs`);
  }
  const perRequest = (k: keyof typeof sum) => (sum[k].cpuMs * 1000) / sum[k].ok;
  console.error(
    `recordInfo served in one process, CPU per answered request: F the service's app (Fastify, rate limit per key, metrics${logger ? ', access line' : ', no logger'}) ` +
      `${perRequest('F').toFixed(0)} µs, M a bare Fastify route doing the same work ${perRequest('M').toFixed(0)} µs, ` +
      `N node:http doing it ${perRequest('N').toFixed(0)} µs; N/F ${(perRequest('N') / perRequest('F')).toFixed(2)}, M/F ${(perRequest('M') / perRequest('F')).toFixed(2)}, N/M ${(perRequest('N') / perRequest('M')).toFixed(2)} ` +
      `(runs ${runs.join(', ')})`,
  );
} finally {
  node.close();
  await minimal.close();
  await service.close();
}
process.exit(0);
