/**
 * referenceCheckRssGrowthMb (issue 25, N4): how much a service's resident memory grows while the
 * check before a run probes large external references. One service process (`serve --migrate`,
 * SQLite) takes 4 tasks of family_c-3.0 at once, each with 10 references of 19.9 MB (5 PNG
 * pictures and 5 MP4 clips whose movie header comes after the media), 40 references checked at
 * the same time, served by a loopback https listener that makes the bytes as it sends them (the
 * fixture certificate; the service trusts it through NODE_EXTRA_CA_CERTS). The figure
 * is the peak VmRSS (sampled every 100 ms) while the checks run minus VmRSS before.
 */
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { clip } from '../support/media/fixtures.js';
import { largePng, movieHeaderLast } from '../support/media/generated-streams.js';
import {
  createAccounts,
  isMain,
  newServiceDir,
  round,
  settle,
  sqliteUrl,
  startService,
  type BenchOutput,
  type RunMode,
} from './support.js';
import { extraCaCertificates, loopbackTls } from '../support/loopback-tls.js';
import { rssMb } from '../support/process-memory.js';

const MB = 1000 * 1000;
const FILE_BYTES = 19.9 * MB;
const TASKS = 4;
const PICTURES = 5;
const CLIPS = 5;
const MODEL = 'vendor_b/family_c-3.0/reference-to-video';

async function fileServer(): Promise<{ base: string; close(): Promise<void> }> {
  const movie = clip(2, 24);
  const server = createServer(loopbackTls(), async (req, res) => {
    const chunks = req.url?.endsWith('.png') ? largePng(FILE_BYTES) : movieHeaderLast(movie, FILE_BYTES);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(FILE_BYTES) });
    res.on('error', () => {});
    for await (const chunk of chunks) {
      if (res.destroyed) return;
      if (!res.write(chunk))
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One task with its references, waited for until the check is behind it (running or ended). */
async function checkedTask(base: string, key: string, files: string, index: number): Promise<string> {
  const input = {
    prompt: 'the references come alive',
    duration_seconds: 5,
    reference_image_urls: Array.from({ length: PICTURES }, (_, i) => `${files}/t${index}-p${i}.png`),
    reference_video_urls: Array.from({ length: CLIPS }, (_, i) => `${files}/t${index}-c${i}.mp4`),
  };
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const created = await fetch(`${base}/api/v1/jobs/createTask`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ model: MODEL, input }),
  });
  const body = (await created.json()) as { data?: { taskId: string } };
  if (created.status !== 202 || !body.data) return `createTask ${created.status} ${JSON.stringify(body).slice(0, 160)}`;
  for (const until = Date.now() + 120_000; Date.now() < until; ) {
    const r = await fetch(`${base}/api/v1/jobs/recordInfo?taskId=${body.data.taskId}`, { headers: auth });
    const record = ((await r.json()) as { data: { state: string; errorMessage?: string } }).data;
    if (record.state === 'failed') return `failed: ${record.errorMessage}`;
    if (record.state !== 'queued') return 'ok';
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return 'still queued after 120 s';
}

export async function benchReferenceCheck(_mode: RunMode): Promise<BenchOutput> {
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  const files = await fileServer();
  const service = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: {
      // The loopback https listener: the outbound test switches allow it, its fixture certificate is trusted.
      MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1',
      MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1',
      NODE_EXTRA_CA_CERTS: extraCaCertificates(),
      NODE_NO_WARNINGS: '1',
      MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000),
      // The check lane is what is measured (bench/support.ts closes it by default).
      MEDIAFORGE_WORKER_CHECK_CONCURRENCY: '16',
    },
  });
  try {
    await settle(service.pid);
    const before = rssMb(service.pid) ?? 0;
    let peak = before;
    const sampler = setInterval(() => {
      const rss = rssMb(service.pid);
      if (rss !== undefined && rss > peak) peak = rss;
    }, 100);
    const started = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: TASKS }, (_, i) => checkedTask(service.url, account.apiKey, files.base, i)),
    );
    const seconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    const failures = outcomes.filter((o) => o !== 'ok');
    const growth = round(peak - before, 1);
    const references = TASKS * (PICTURES + CLIPS);
    return {
      figures: {
        referenceCheckRssGrowthMb: failures.length ? null : growth,
        referenceCheckRssBeforeMb: round(before, 1),
        referenceCheckRssPeakMb: round(peak, 1),
      },
      notes: [
        `reference-check: ${TASKS} tasks of ${MODEL} at once, ${references} references of ${FILE_BYTES / MB} MB (${PICTURES} PNG pictures and ${CLIPS} MP4 clips with the movie header last, per task) from a loopback https generator, SQLite: VmRSS ${before.toFixed(1)} MiB before, peak ${peak.toFixed(1)} MiB (sampled every 100 ms), growth ${growth} MiB, ${seconds.toFixed(1)} s` +
          (failures.length ? `; FAILED checks (figure null): ${failures.join('; ')}` : ''),
      ],
    };
  } finally {
    await service.stop();
    await files.close();
  }
}

if (isMain(import.meta.url)) {
  const out = await benchReferenceCheck({ quick: process.argv.includes('--quick') });
  for (const note of out.notes) console.log(`- ${note}`);
  console.log(JSON.stringify(out.figures));
}
