/**
 * The API's latency while console sign-ins hash passwords (issue 16, item 2). One service process
 * (SQLite); 200 sign-ins, 32 at a time, half with a wrong password for an existing user and half
 * for unknown emails (the sign-in limits are raised so that every one reaches the hashing); all
 * the while a cheap authenticated call (GET /api/v1/chat/credit) goes out every 10 ms on its own,
 * open-loop (a stalled event loop delays the calls already sent and those due meanwhile). The
 * figure is the p99 of those calls' latencies during the sign-ins; the same calls' p99 on the
 * idle service is reported beside it.
 */
import { Agent } from 'node:http';
import {
  createAccounts,
  isMain,
  newServiceDir,
  percentile,
  round,
  sleep,
  sqliteUrl,
  startService,
  timedCall,
  type BenchOutput,
  type RunMode,
} from './support.js';

const SIGN_INS = 200;
const CONCURRENCY = 32;
const PROBE_EVERY_MS = 10;
const PASSWORD = 'correct horse battery';

/** Calls `path` every PROBE_EVERY_MS until stopped; the latencies of the calls sent while running. */
function probe(agent: Agent, url: string, key: string) {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const inFlight: Promise<void>[] = [];
  const timer = setInterval(() => {
    inFlight.push(
      timedCall(agent, url, 'GET', { authorization: `Bearer ${key}` }).then(({ status, ms }) => {
        latencies.push(ms);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }),
    );
  }, PROBE_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      return { latencies, statuses: Object.fromEntries(statuses) };
    },
  };
}

export async function benchSignIns(_mode: RunMode): Promise<BenchOutput> {
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [account] = await createAccounts(dbUrl, 1);
  const service = await startService({
    dir,
    dbUrl,
    removeDir: true,
    env: {
      // Raised so that the load reaches the hashing (the limits themselves are tested in test/console).
      MEDIAFORGE_SIGNIN_PER_ADDRESS_PER_MINUTE: '1000000000',
      MEDIAFORGE_SIGNIN_FAILURES_BEFORE_LOCKOUT: '1000000000',
      MEDIAFORGE_SIGNUPS_PER_ADDRESS_PER_DAY: '1000000000',
    },
  });
  const probeAgent = new Agent({ keepAlive: true, maxSockets: 64 });
  const signInAgent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    const consoleHeaders = { 'content-type': 'application/json', 'x-requested-with': 'mediaforge-console' };
    const signUp = await timedCall(
      signInAgent,
      `${service.url}/console/api/signup`,
      'POST',
      consoleHeaders,
      JSON.stringify({ email: 'existing@example.com', password: PASSWORD }),
    );
    if (signUp.status !== 200) throw new Error(`sign-up answered ${signUp.status}`);
    const creditUrl = `${service.url}/api/v1/chat/credit`;
    for (let i = 0; i < 50; i++)
      await timedCall(probeAgent, creditUrl, 'GET', { authorization: `Bearer ${account.apiKey}` });

    const idle = probe(probeAgent, creditUrl, account.apiKey);
    await sleep(2000);
    const idleRun = await idle.stop();

    const loaded = probe(probeAgent, creditUrl, account.apiKey);
    const started = performance.now();
    const signInStatuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < SIGN_INS) {
        const i = next++;
        const email = i % 2 === 0 ? 'existing@example.com' : `unknown-${i}@example.com`;
        const { status } = await timedCall(
          signInAgent,
          `${service.url}/console/api/signin`,
          'POST',
          consoleHeaders,
          JSON.stringify({ email, password: `wrong password ${i}` }),
        );
        signInStatuses.set(status, (signInStatuses.get(status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (performance.now() - started) / 1000;
    const loadedRun = await loaded.stop();

    const statuses = Object.fromEntries(signInStatuses);
    return {
      figures: {
        apiP99MsDuringSignIns: round(percentile(loadedRun.latencies, 99), 1),
        apiP50MsDuringSignIns: round(percentile(loadedRun.latencies, 50), 1),
        apiMaxMsDuringSignIns: round(Math.max(...loadedRun.latencies), 1),
        apiP99MsIdle: round(percentile(idleRun.latencies, 99), 1),
        signInsPerSecond: round(SIGN_INS / seconds, 1),
      },
      notes: [
        `signins: ${SIGN_INS} sign-ins (wrong password for an existing user / unknown emails, alternately), ${CONCURRENCY} at a time, took ${seconds.toFixed(1)} s; answers ${JSON.stringify(statuses)}; ` +
          `GET /api/v1/chat/credit every ${PROBE_EVERY_MS} ms meanwhile: ${loadedRun.latencies.length} calls ${JSON.stringify(loadedRun.statuses)}, p50 ${percentile(loadedRun.latencies, 50).toFixed(1)} ms, p99 ${percentile(loadedRun.latencies, 99).toFixed(1)} ms, max ${Math.max(...loadedRun.latencies).toFixed(1)} ms; idle p99 ${percentile(idleRun.latencies, 99).toFixed(1)} ms`,
      ],
    };
  } finally {
    probeAgent.destroy();
    signInAgent.destroy();
    await service.stop();
  }
}

if (isMain(import.meta.url)) {
  console.log(JSON.stringify(await benchSignIns({ quick: process.argv.includes('--quick') })));
}
