/**
 * mediaRangeP99Ms (issue 29, item 4): how fast a signed media link answers the range reads of 50
 * players. One service process (`serve --migrate`, SQLite, local blob store) holds a 300 MB video
 * (written into its store before it starts, through the store's own put); 50 readers on keep-alive
 * connections ask for 1 MiB at a random offset (`Range: bytes=a-(a+1 MiB-1)`) through one signed
 * link. One answer is checked against the file's bytes first (a 206, the right Content-Range, the
 * same bytes); every answer of the runs must be a 206 of exactly 1 MiB.
 *
 * mediaRangeP99Ms is the p99 at a player's pace, open loop: each reader sends one read every
 * PACE_MS (250 ms), the readers' phases spread evenly over the first period: 200 reads/s offered in
 * all. 1 MiB every 250 ms is 32 Mbit/s per reader, more than a 4K stream (a player at 8-25 Mbit/s
 * needs a MiB every 0.3-1 s), so the pace stands for all 50 players buffering ahead or seeking at
 * once. A read's time runs from when it was due, not from when it was sent: a reader still waiting
 * for its previous answer sends late, and the lateness counts (no coordinated omission).
 * mediaRangeBarePacedP99Ms is the bare server below at the same pace: this machine's and this
 * client's floor for the figure.
 *
 * mediaRangeFullLoadP99Ms is the same 50 readers closed loop (each sends its next read as soon as
 * its answer is in): a throughput figure. At 50 closed-loop readers p99 >= 50 / answers per second,
 * so a p99 under 50 ms at full load would need more than 1,000 MiB/s through one process. Right
 * before it, the same load runs against a bare node:http process answering 1 MiB of random bytes
 * from memory (the limit of this machine and this client for 1 MiB answers): mediaRangeBareP99Ms,
 * and mediaRangeVsBare (answers per second, service / bare).
 *
 * The client is node:http (bench/support.ts timedCall), not autocannon: autocannon 9 decodes every
 * body into a string, which for 1 MiB of binary costs its process about 25 ms of CPU, and made it,
 * not the service, the limit (33 answers/s, where a plain file server answers 450/s to node:http).
 */
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { LocalBlobStore, signMediaPath } from '../runtime/blobs/blob-store.js';
import {
  checkMostlyOk,
  durations,
  freePort,
  isMain,
  newServiceDir,
  percentile,
  round,
  SERVICE_SECRET,
  settle,
  sleep,
  spawnHttpProcess,
  startService,
  timedCall,
  type BenchOutput,
  type LoadResult,
  type RunMode,
} from './support.js';

const MB = 1000 * 1000;
const MIB = 1024 * 1024;
const FILE_BYTES = 300 * MB;
const RANGE_BYTES = MIB;
const READERS = 50;
/** One read per reader every PACE_MS in the paced run (see the header). */
const PACE_MS = 250;
const KEY = 'outputs/bench-range-video.mp4';

/** The limit: node:http, no framework, the same 1 MiB of random bytes from memory for every request. */
const BARE_SERVER = `
const http = require('node:http');
const body = require('node:crypto').randomBytes(${RANGE_BYTES});
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

/** Answer times (ms) and statuses of a run's reads, made into a LoadResult for checkMostlyOk. */
class Reads {
  private readonly latencies: number[] = [];
  private readonly statuses = new Map<number, number>();
  private errors = 0;
  private wrongSize = 0;

  add(call: { status: number; bytes: number; ms: number }): void {
    this.latencies.push(call.ms);
    this.statuses.set(call.status, (this.statuses.get(call.status) ?? 0) + 1);
    if (call.status === 206 && call.bytes !== RANGE_BYTES) this.wrongSize++;
  }

  failed(): void {
    this.errors++;
  }

  result(seconds: number): LoadResult & { wrongSize: number } {
    let ok = 0;
    for (const [code, count] of this.statuses) if (code >= 200 && code < 300) ok += count;
    return {
      rps: ok / seconds,
      ok,
      non2xx: this.latencies.length - ok,
      errors: this.errors,
      p50Ms: round(percentile(this.latencies, 50), 1) ?? Number.NaN,
      p99Ms: round(percentile(this.latencies, 99), 1) ?? Number.NaN,
      seconds,
      statusCodes: Object.fromEntries(this.statuses),
      wrongSize: this.wrongSize,
    };
  }
}

/** Closed loop: each reader sends its next read as soon as its previous answer is in, for `seconds`. */
async function fullLoad(agent: Agent, url: string, seconds: number) {
  const reads = new Reads();
  const started = performance.now();
  const until = started + seconds * 1000;
  const reader = async () => {
    while (performance.now() < until)
      await timedCall(agent, url, 'GET', { range: randomRange() }).then(
        (call) => reads.add(call),
        () => reads.failed(),
      );
  };
  await Promise.all(Array.from({ length: READERS }, reader));
  return reads.result((performance.now() - started) / 1000);
}

/** Open loop: reader i's k-th read is due at i*PACE_MS/READERS + k*PACE_MS; its time counts from then. */
async function paced(agent: Agent, url: string, seconds: number) {
  const reads = new Reads();
  const started = performance.now();
  const perReader = Math.floor((seconds * 1000) / PACE_MS);
  const reader = async (index: number) => {
    for (let k = 0; k < perReader; k++) {
      const due = started + (index * PACE_MS) / READERS + k * PACE_MS;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const late = performance.now() - due;
      await timedCall(agent, url, 'GET', { range: randomRange() }).then(
        (call) => reads.add({ ...call, ms: call.ms + late }),
        () => reads.failed(),
      );
    }
  };
  await Promise.all(Array.from({ length: READERS }, (_, i) => reader(i)));
  return reads.result((performance.now() - started) / 1000);
}

/** Mostly 2xx (checkMostlyOk), and every 2xx a 206 of exactly 1 MiB. */
function checkAllPartial(what: string, run: LoadResult & { wrongSize: number }): void {
  checkMostlyOk(what, run);
  const partial = run.statusCodes['206'] ?? 0;
  if (partial !== run.ok || run.wrongSize > 0)
    throw new Error(
      `media-ranges, ${what}: ${run.ok} answers were 2xx, ${partial} were 206, ${run.wrongSize} of those not 1 MiB`,
    );
}

export async function benchMediaRanges(
  mode: RunMode & {
    /** Extra node flags for the service process (bench/profile.ts ranges: --cpu-prof). */
    serviceNodeArgs?: string[];
  },
): Promise<BenchOutput> {
  const d = durations(mode);
  const dir = newServiceDir();
  const blobs = join(dir, 'blobs');
  await new LocalBlobStore(blobs).put(KEY, videoBytes());
  const service = await startService({
    dir,
    removeDir: true,
    env: { MEDIAFORGE_BLOB_STORE: 'local' },
    nodeArgs: mode.serviceNodeArgs,
  });
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
  const agent = new Agent({ keepAlive: true, maxSockets: READERS });
  try {
    const link = `${service.url}${signMediaPath(SERVICE_SECRET, KEY, Date.now() + 20 * 60_000)}`;

    // One answer checked against the stored file's own bytes.
    const probe = { start: 123_456_789, end: 123_456_789 + RANGE_BYTES - 1 };
    const answer = await fetch(link, { headers: { range: `bytes=${probe.start}-${probe.end}` } });
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

    await fullLoad(agent, link, d.warmupSeconds);
    await fullLoad(agent, bare.url, d.warmupSeconds);
    await settle(service.pid, d.settleMs);
    const player = await paced(agent, link, d.peakSeconds);
    checkAllPartial('paced', player);
    await settle(bare.pid, d.settleMs);
    const barePlayer = await paced(agent, bare.url, d.peakSeconds);
    checkMostlyOk('bare 1 MiB, paced', barePlayer);
    await settle(bare.pid, d.settleMs);
    const limit = await fullLoad(agent, bare.url, d.peakSeconds);
    checkMostlyOk('bare 1 MiB', limit);
    await settle(service.pid, d.settleMs);
    const run = await fullLoad(agent, link, d.peakSeconds);
    checkAllPartial('full load', run);
    return {
      figures: {
        mediaRangeP99Ms: player.p99Ms,
        mediaRangeP50Ms: player.p50Ms,
        mediaRangeBarePacedP99Ms: barePlayer.p99Ms,
        mediaRangeFullLoadP99Ms: run.p99Ms,
        mediaRangeFullLoadP50Ms: run.p50Ms,
        mediaRangesPerSec: round(run.rps, 0),
        mediaRangeBareP99Ms: limit.p99Ms,
        mediaRangeVsBare: round(run.rps / limit.rps, 3),
      },
      notes: [
        `media-ranges: ${READERS} readers each reading 1 MiB at a random offset of a ${FILE_BYTES / MB} MB video through one signed link (local store, serve --migrate on SQLite), after a ${d.warmupSeconds} s warm-up. ` +
          `Paced (open loop, one read per reader every ${PACE_MS} ms, ${(READERS * 1000) / PACE_MS}/s offered, ${d.peakSeconds} s): ${player.ok} answers, all 206, p50 ${player.p50Ms} ms, p99 ${player.p99Ms} ms (the bare server at the same pace: p50 ${barePlayer.p50Ms} ms, p99 ${barePlayer.p99Ms} ms). ` +
          `Full load (closed loop, ${d.peakSeconds} s): ${run.ok} answers, all 206, ${run.rps.toFixed(0)}/s (${((run.rps * RANGE_BYTES) / MIB).toFixed(0)} MiB/s), p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms; ` +
          `the bare node:http server answering 1 MiB from memory to the same load right before: ${limit.rps.toFixed(0)}/s, p50 ${limit.p50Ms} ms, p99 ${limit.p99Ms} ms`,
      ],
    };
  } finally {
    agent.destroy();
    await bare.stop(2000);
    await service.stop();
  }
}

if (isMain(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  console.log(JSON.stringify(await benchMediaRanges({ quick })));
}
