/**
 * mediaRangeP99Ms (issue 29, item 4): how fast a signed media link answers the range reads a
 * seeking player sends. One service process (`serve --migrate`, SQLite, local blob store) holds a
 * 300 MB video (written into its store before it starts, through the store's own put); 50
 * keep-alive connections (autocannon, in this process) each ask, one after another, for 1 MiB at
 * a random offset (`Range: bytes=a-(a+1 MiB-1)`) through one signed link, at full load. The figure
 * is the p99 of the answer times (whole 1 MiB body received). One answer is checked against the
 * file's bytes first: a 206 with the right Content-Range and the same bytes. Right before, the
 * same load runs against a bare node:http process answering 1 MiB from memory (the limit of this
 * machine and this client for 1 MiB answers): mediaRangeBareP99Ms, and mediaRangeVsBare (rates).
 */
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalBlobStore, signMediaPath } from '../runtime/blobs/blob-store.js';
import {
  cannon,
  checkMostlyOk,
  durations,
  freePort,
  isMain,
  newServiceDir,
  round,
  SERVICE_SECRET,
  settle,
  spawnHttpProcess,
  startService,
  type BenchOutput,
  type RunMode,
} from './support.js';

const MB = 1000 * 1000;
const MIB = 1024 * 1024;
const FILE_BYTES = 300 * MB;
const RANGE_BYTES = MIB;
const READERS = 50;
const KEY = 'outputs/bench-range-video.mp4';

/** The limit: node:http, no framework, the same 1 MiB from memory for every request. */
const BARE_SERVER = `
const http = require('node:http');
const body = Buffer.alloc(${RANGE_BYTES}, 7);
http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
  res.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** 300 MB in 1 MiB pieces, each different (a random MiB with its index written over its head). */
async function* videoBytes(): AsyncGenerator<Buffer> {
  const base = randomBytes(MIB);
  for (let sent = 0, index = 0; sent < FILE_BYTES; index++) {
    const piece = Buffer.from(base.subarray(0, Math.min(MIB, FILE_BYTES - sent)));
    piece.writeUInt32BE(index, 0);
    sent += piece.length;
    yield piece;
  }
}

function randomRange(): string {
  const start = Math.floor(Math.random() * (FILE_BYTES - RANGE_BYTES));
  return `bytes=${start}-${start + RANGE_BYTES - 1}`;
}

export async function benchMediaRanges(mode: RunMode): Promise<BenchOutput> {
  const d = durations(mode);
  const dir = newServiceDir();
  const blobs = join(dir, 'blobs');
  await new LocalBlobStore(blobs).put(KEY, videoBytes());
  const service = await startService({ dir, removeDir: true, env: { MEDIAFORGE_BLOB_STORE: 'local' } });
  const barePort = await freePort();
  const bare = await spawnHttpProcess(['-e', BARE_SERVER], {
    env: { ...process.env, PORT: String(barePort) },
    port: barePort,
    logPath: join(dir, 'bare.log'),
    readyPath: '/',
    label: 'bare node:http server',
  }).catch(async (error) => {
    await service.stop();
    throw error;
  });
  try {
    const path = signMediaPath(SERVICE_SECRET, KEY, Date.now() + 20 * 60_000);

    // One answer checked against the stored file's own bytes.
    const probe = { start: 123_456_789, end: 123_456_789 + RANGE_BYTES - 1 };
    const answer = await fetch(`${service.url}${path}`, { headers: { range: `bytes=${probe.start}-${probe.end}` } });
    const body = Buffer.from(await answer.arrayBuffer());
    const file = await open(join(blobs, KEY), 'r');
    const expected = Buffer.alloc(RANGE_BYTES);
    await file.read(expected, 0, RANGE_BYTES, probe.start);
    await file.close();
    if (
      answer.status !== 206 ||
      answer.headers.get('content-range') !== `bytes ${probe.start}-${probe.end}/${FILE_BYTES}` ||
      !body.equals(expected)
    )
      throw new Error(
        `media-ranges: the checked range came back ${answer.status} ${answer.headers.get('content-range')}`,
      );

    const ranged = (url: string, seconds: number) =>
      cannon({
        url,
        connections: READERS,
        duration: seconds,
        requests: [
          {
            method: 'GET',
            path,
            setupRequest: (request) => ({ ...request, headers: { ...request.headers, range: randomRange() } }),
          },
        ],
      });
    await ranged(service.url, d.warmupSeconds);
    await ranged(bare.url, d.warmupSeconds);
    await settle(bare.pid, d.settleMs);
    const limit = await ranged(bare.url, d.peakSeconds);
    checkMostlyOk('bare 1 MiB', limit);
    await settle(service.pid, d.settleMs);
    const run = await ranged(service.url, d.peakSeconds);
    checkMostlyOk('media ranges', run);
    const partial = run.statusCodes['206'] ?? 0;
    if (partial !== run.ok) throw new Error(`media-ranges: ${run.ok} answers were 2xx but only ${partial} were 206`);
    return {
      figures: {
        mediaRangeP99Ms: round(run.p99Ms, 2),
        mediaRangeP50Ms: round(run.p50Ms, 2),
        mediaRangesPerSec: round(run.rps, 0),
        mediaRangeBareP99Ms: round(limit.p99Ms, 2),
        mediaRangeVsBare: round(run.rps / limit.rps, 3),
      },
      notes: [
        `media-ranges: ${READERS} connections each reading 1 MiB at a random offset of a ${FILE_BYTES / MB} MB video through one signed link (local store, serve --migrate on SQLite), ${d.peakSeconds} s at full load after a ${d.warmupSeconds} s warm-up: ${run.ok} answers, all 206, ${run.rps.toFixed(0)}/s (${((run.rps * RANGE_BYTES) / MIB).toFixed(0)} MiB/s), p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms; the bare node:http server answering 1 MiB from memory to the same load right before: ${limit.rps.toFixed(0)}/s, p50 ${limit.p50Ms} ms, p99 ${limit.p99Ms} ms`,
      ],
    };
  } finally {
    await bare.stop(2000);
    await service.stop();
  }
}

if (isMain(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  console.log(JSON.stringify(await benchMediaRanges({ quick })));
}
