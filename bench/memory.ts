/**
 * importRssGrowthMb (issue 16, item 6): how much a service's resident memory grows while large
 * files pass through it. One service process (`serve --migrate`, SQLite, local blob store) takes,
 * at the same time, three LoRA imports of 300 MB each from a loopback listener that makes the
 * bytes as it sends them, and one 300 MB upload (ticket, PUT streamed from a generator, commit).
 * The figure is the peak VmRSS (sampled every 100 ms) during the transfers minus VmRSS before.
 * `--store=database` runs the same with MEDIAFORGE_BLOB_STORE=database.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
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
import { rssMb } from '../support/process-memory.js';

const MB = 1000 * 1000;
const FILE_BYTES = 300 * MB;
const IMPORTS = 3;
const CHUNK = 64 * 1024;

/** A safetensors file of `total` bytes: an 8-byte header length, a small JSON header, then zeros made as they are sent. */
async function* safetensorsBytes(total: number): AsyncGenerator<Buffer> {
  const json = Buffer.from(
    JSON.stringify({ __metadata__: { format: 'pt' }, 'w.weight': { dtype: 'F16', shape: [1], data_offsets: [0, 2] } }),
  );
  const head = Buffer.alloc(8 + json.length);
  head.writeBigUInt64LE(BigInt(json.length), 0);
  json.copy(head, 8);
  yield head;
  const zeros = Buffer.alloc(CHUNK);
  for (let left = total - head.length; left > 0; left -= CHUNK) yield left >= CHUNK ? zeros : zeros.subarray(0, left);
}

async function fileServer(): Promise<{ base: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(FILE_BYTES) });
    Readable.from(safetensorsBytes(FILE_BYTES)).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function json(response: Response): Promise<any> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function importLora(base: string, key: string, url: string): Promise<string> {
  const response = await fetch(`${base}/api/v1/files/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  const body = await json(response);
  return response.status === 200 ? 'ok' : `import ${response.status} ${JSON.stringify(body).slice(0, 120)}`;
}

async function uploadFile(base: string, key: string): Promise<string> {
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const ticket = await fetch(`${base}/api/v1/common/upload-url`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ fileName: 'big.safetensors', contentType: 'application/octet-stream', size: FILE_BYTES }),
  });
  const t = await json(ticket);
  if (ticket.status !== 200) return `ticket ${ticket.status} ${JSON.stringify(t).slice(0, 120)}`;
  const iterator = safetensorsBytes(FILE_BYTES);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(new Uint8Array(next.value));
    },
  });
  const put = await fetch(t.data.uploadUrl, {
    method: 'PUT',
    headers: t.data.headers,
    body,
    duplex: 'half',
  } as RequestInit);
  const p = await json(put);
  if (put.status !== 200) return `put ${put.status} ${JSON.stringify(p).slice(0, 120)}`;
  const commit = await fetch(`${base}/api/v1/files/${t.data.fileId}/commit`, {
    method: 'POST',
    headers: auth,
    body: '{}',
  });
  const c = await json(commit);
  return commit.status === 200 ? 'ok' : `commit ${commit.status} ${JSON.stringify(c).slice(0, 120)}`;
}

export async function benchMemory(_mode: RunMode, store: 'local' | 'database' = 'local'): Promise<BenchOutput> {
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  const files = await fileServer();
  const service = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: {
      // The loopback file server is plain http on 127.0.0.1: the outbound test switches allow it.
      MEDIAFORGE_WEBHOOK_ALLOW_PRIVATE: '1',
      MEDIAFORGE_WEBHOOK_ALLOW_INSECURE: '1',
      MEDIAFORGE_UPLOAD_MAX_BYTES: String(FILE_BYTES),
      MEDIAFORGE_BLOB_STORE: store,
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
    const outcomes = await Promise.all([
      ...Array.from({ length: IMPORTS }, (_, i) =>
        importLora(service.url, account.apiKey, `${files.base}/lora-${i}.safetensors`),
      ),
      uploadFile(service.url, account.apiKey),
    ]);
    const seconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    const failures = outcomes.filter((o) => o !== 'ok');
    const growth = round(peak - before, 1);
    return {
      figures: {
        importRssGrowthMb: failures.length ? null : growth,
        importRssBeforeMb: round(before, 1),
        importRssPeakMb: round(peak, 1),
      },
      notes: [
        `memory: ${IMPORTS} parallel LoRA imports of ${FILE_BYTES / MB} MB from a loopback generator and one ${FILE_BYTES / MB} MB upload (ticket, streamed PUT, commit), ${store} blob store, SQLite: VmRSS ${before.toFixed(1)} MiB before, peak ${peak.toFixed(1)} MiB (sampled every 100 ms), growth ${growth} MiB, ${seconds.toFixed(1)} s` +
          (failures.length ? `; FAILED transfers (figure null): ${failures.join('; ')}` : ''),
      ],
    };
  } finally {
    await service.stop();
    await files.close();
  }
}

if (isMain(import.meta.url)) {
  const store = process.argv.includes('--store=database') ? 'database' : 'local';
  const out = await benchMemory({ quick: process.argv.includes('--quick') }, store);
  for (const note of out.notes) console.log(`- ${note}`);
  console.log(JSON.stringify(out.figures));
}
