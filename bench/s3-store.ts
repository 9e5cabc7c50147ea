/**
 * s3UploadRssGrowthMb (issue 29): how much a service's resident memory grows while 300 MB files
 * stream into the S3 store. One service (`serve --migrate`, SQLite, MEDIAFORGE_BLOB_STORE=s3://...
 * on s3rver at 127.0.0.1, MEDIAFORGE_S3_CHECKSUM=when_required, path-style) takes, one after the
 * other:
 * - a 300 MB upload through the playground form (POST /playground/api/uploads: the bytes pass
 *   through the service, which streams them to the store as a multipart upload, then probes it);
 * - a 300 MB upload through an API ticket (with S3 a presigned PUT: the bytes go to the store, the
 *   service's commit checks the size and probes by range reads);
 * - a 300 MB upstream result (a loopback jobs-protocol server making an MP4 as it is read, the
 *   movie header after the padding) downloaded into the store and measured.
 * The figure is the largest of the three peak VmRSS (sampled every 100 ms) minus VmRSS before.
 * The compatible layer's multipart body (POST /v1/videos) is bounded by the body limit and read
 * into memory by design; it is not a 300 MB path.
 */
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { addCredits } from '../runtime/accounts/accounts.js';
import { openDb } from '../runtime/storage/dialect.js';
import { askedClip } from '../support/media/fixtures.js';
import { largeMp4, largePng } from '../support/media/generated-streams.js';
import { rssMb } from '../support/process-memory.js';
import { S3RVER_BUCKET, startS3rver } from '../support/s3-server.js';
import { JobsProtocolServer } from '../support/upstreams/jobs-protocol-server.js';
import {
  createAccounts,
  isMain,
  newServiceDir,
  round,
  settle,
  sleep,
  sqliteUrl,
  startService,
  type BenchOutput,
  type RunMode,
} from './support.js';

const MB = 1000 * 1000;
const FILE_BYTES = 300 * MB;
/** The uploads' model and field (a picture reference). */
const MODEL = 'vendor_d/family_d/reference-to-video';
/**
 * The task's model has no references: a reference is fetched by the check before the run, off
 * this machine, and bench services leave the check lane empty (support/service-process.ts), so
 * with the uploads' model the task never ran and the bench waited for it without end.
 */
const TASK_MODEL = 'vendor_d/family_d/text-to-video';
const INPUT = { prompt: 'a lighthouse at dusk' };
/** Enough of the user's own purchases to unlock a storage plan that holds a 300 MB file. */
const CREDITS = 1_000_000;

async function json(response: Response): Promise<any> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function byteStream(chunks: AsyncGenerator<Buffer>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(new Uint8Array(next.value));
    },
  });
}

/** The playground form's upload: the raw body with its Content-Length, as the page sends it. */
async function playgroundUpload(base: string, session: { cookie: string; csrf: string }): Promise<string> {
  const query = new URLSearchParams({ model: MODEL, field: 'reference_image_urls' });
  return new Promise((resolve) => {
    const request = http.request(
      `${base}/playground/api/uploads?${query}`,
      {
        method: 'POST',
        headers: {
          'content-type': 'image/png',
          'content-length': String(FILE_BYTES),
          'x-file-name': 'big.png',
          cookie: session.cookie,
          'x-csrf-token': session.csrf,
        },
      },
      (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () =>
          resolve(response.statusCode === 200 ? 'ok' : `playground ${response.statusCode} ${body.slice(0, 160)}`),
        );
      },
    );
    request.on('error', (error) => resolve(`playground ${error.message}`));
    Readable.from(largePng(FILE_BYTES)).pipe(request);
  });
}

/** An API upload: ticket (a presigned PUT on the store), the PUT, the commit. */
async function ticketUpload(base: string, key: string): Promise<string> {
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const ticket = await fetch(`${base}/api/v1/common/upload-url`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ fileName: 'big.png', contentType: 'image/png', size: FILE_BYTES }),
  });
  const t = await json(ticket);
  if (ticket.status !== 200) return `ticket ${ticket.status} ${JSON.stringify(t).slice(0, 160)}`;
  const put = await fetch(t.data.uploadUrl, {
    method: 'PUT',
    headers: { ...t.data.headers, 'content-length': String(FILE_BYTES) },
    body: byteStream(largePng(FILE_BYTES)),
    duplex: 'half',
  } as RequestInit);
  if (put.status !== 200) return `put ${put.status} ${(await put.text()).slice(0, 160)}`;
  const commit = await fetch(`${base}/api/v1/files/${t.data.fileId}/commit`, {
    method: 'POST',
    headers: auth,
    body: '{}',
  });
  const c = await json(commit);
  return commit.status === 200 ? 'ok' : `commit ${commit.status} ${JSON.stringify(c).slice(0, 160)}`;
}

/** A task routed to the loopback upstream, followed until it ends. */
async function upstreamResult(base: string, key: string): Promise<string> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const created = await fetch(`${base}/api/v1/jobs/createTask`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: TASK_MODEL, input: { ...INPUT, prompt: 'a 300 MB result' } }),
  });
  const body = await json(created);
  const taskId: string | undefined = body?.data?.taskId;
  if ((created.status !== 200 && created.status !== 202) || !taskId)
    return `createTask ${created.status} ${JSON.stringify(body).slice(0, 160)}`;
  for (const started = Date.now(); Date.now() - started < 600_000; await sleep(500)) {
    const info = await json(await fetch(`${base}/api/v1/jobs/recordInfo?taskId=${taskId}`, { headers }));
    const state = info?.data?.state;
    if (state === 'succeeded') return 'ok';
    if (state !== 'queued' && state !== 'running') return `task ${state} ${JSON.stringify(info).slice(0, 160)}`;
  }
  return 'task still running after 600 s';
}

async function signUp(base: string): Promise<{ cookie: string; csrf: string }> {
  const response = await fetch(`${base}/console/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' },
    body: JSON.stringify({ email: 'bench@example.com', password: 'correct horse battery' }),
  });
  if (response.status !== 200) throw new Error(`sign-up ${response.status}: ${await response.text()}`);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0];
  return { cookie, csrf: ((await response.json()) as { data: { csrfToken: string } }).data.csrfToken };
}

export async function benchS3Store(_mode: RunMode): Promise<BenchOutput> {
  const s3 = await startS3rver();
  const upstream = await new JobsProtocolServer({
    latencyMs: 200,
    apiKey: 'bench-key',
    result: (job) => largeMp4(FILE_BYTES, askedClip(job.model, job.input, job.seconds)),
  }).start();
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  const deployments = join(dir, 'deployments.yaml');
  writeFileSync(
    deployments,
    [
      'upstreams:',
      `  up: { kind: jobs, baseUrl: "${upstream.baseUrl}", secretEnv: BENCH_UPSTREAM_KEY }`,
      'models:',
      `  ${TASK_MODEL}:`,
      '    - upstream: up',
    ].join('\n'),
  );
  const service = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: {
      MEDIAFORGE_BLOB_STORE: `s3://${S3RVER_BUCKET}/bench`,
      MEDIAFORGE_S3_ENDPOINT: s3.endpoint,
      MEDIAFORGE_S3_FORCE_PATH_STYLE: 'true',
      MEDIAFORGE_S3_CHECKSUM: 'when_required',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      MEDIAFORGE_UPLOAD_MAX_BYTES: String(FILE_BYTES),
      MEDIAFORGE_DEPLOYMENTS: deployments,
      BENCH_UPSTREAM_KEY: 'bench-key',
      MEDIAFORGE_UPSTREAM_POLL_MS: '100',
    },
  });
  const db = await openDb(dbUrl);
  try {
    const session = await signUp(service.url);
    const user = await db.kysely
      .selectFrom('users')
      .select('account_id')
      .where('email', '=', 'bench@example.com')
      .executeTakeFirstOrThrow();
    await addCredits(db, user.account_id, CREDITS, Date.now());
    await settle(service.pid);
    const before = rssMb(service.pid) ?? 0;
    const phases: [name: string, run: () => Promise<string>][] = [
      ['playground upload (through the service)', () => playgroundUpload(service.url, session)],
      ['API ticket upload (presigned PUT, commit probes by range)', () => ticketUpload(service.url, account.apiKey)],
      ['upstream result', () => upstreamResult(service.url, account.apiKey)],
    ];
    const parts: string[] = [];
    const failures: string[] = [];
    let worst = 0;
    for (const [name, run] of phases) {
      let peak = before;
      const sampler = setInterval(() => {
        const rss = rssMb(service.pid);
        if (rss !== undefined && rss > peak) peak = rss;
      }, 100);
      const started = Date.now();
      const outcome = await run();
      clearInterval(sampler);
      const growth = peak - before;
      worst = Math.max(worst, growth);
      parts.push(
        `${name}: peak ${peak.toFixed(1)} MiB, growth ${growth.toFixed(1)} MiB, ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      if (outcome !== 'ok') failures.push(`${name}: ${outcome}`);
    }
    return {
      figures: { s3UploadRssGrowthMb: failures.length ? null : round(worst, 1) },
      notes: [
        `s3-store: ${FILE_BYTES / MB} MB each into the S3 store (s3rver on loopback, when_required checksums), SQLite, VmRSS ${before.toFixed(1)} MiB before (sampled every 100 ms): ${parts.join('; ')}` +
          (failures.length ? `; FAILED (figure null): ${failures.join('; ')}` : ''),
      ],
    };
  } finally {
    await db.close();
    await service.stop();
    await upstream.close();
    await s3.close();
  }
}

if (isMain(import.meta.url)) {
  const out = await benchS3Store({ quick: process.argv.includes('--quick') });
  for (const note of out.notes) console.log(`- ${note}`);
  console.log(JSON.stringify(out.figures));
}
