/**
 * Diagnosis only: one endpoint's rate on two service processes side by side, the second started
 * with a preload (a proposed runtime change applied from outside, e.g. bench/no-request-log-preload.ts),
 * in alternating runs A B B A A B after a warm-up of each.
 *   tsx bench/ab.ts --preload=./bench/no-request-log-preload.ts [--endpoint=createTask|quote|recordInfo] [--seconds=5]
 */
import {
  cannon,
  cannonOptions,
  createAccounts,
  createOneTask,
  endpointShapes,
  isMain,
  newServiceDir,
  pooledRate,
  settle,
  sqliteUrl,
  startService,
  type LoadResult,
  type ServiceProcess,
} from './support.js';

export async function ab(
  preload: string,
  endpoint: 'createTask' | 'quote' | 'recordInfo',
  seconds: number,
): Promise<{ base: number; preloaded: number; ratio: number; runs: string }> {
  const start = async (nodeArgs: string[]) => {
    const dir = newServiceDir();
    const dbUrl = sqliteUrl(dir);
    const [account] = await createAccounts(dbUrl, 1);
    const service = await startService({
      dir,
      dbUrl,
      removeDir: true,
      env: { MEDIAFORGE_SIMULATOR_LATENCY_MS: String(10 * 60_000) },
      nodeArgs,
    });
    const shape = endpointShapes(account.apiKey, await createOneTask(service.url, account.apiKey))[endpoint];
    return { service, shape };
  };
  const started: ServiceProcess[] = [];
  try {
    const a = await start([]);
    started.push(a.service);
    const b = await start(['--import', 'tsx', '--import', preload]);
    started.push(b.service);
    const run = async (x: typeof a, secs: number) => {
      await settle(a.service.pid);
      await settle(b.service.pid);
      return cannon(cannonOptions(x.service.url, x.shape, 50, secs));
    };
    await run(a, 2);
    await run(b, 2);
    const runs: { kind: 'A' | 'B'; r: LoadResult }[] = [];
    for (const kind of ['A', 'B', 'B', 'A', 'A', 'B'] as const)
      runs.push({ kind, r: await run(kind === 'A' ? a : b, seconds) });
    const base = pooledRate(
      'without',
      runs.filter((x) => x.kind === 'A').map((x) => x.r),
    );
    const preloaded = pooledRate(
      'with',
      runs.filter((x) => x.kind === 'B').map((x) => x.r),
    );
    return {
      base,
      preloaded,
      ratio: preloaded / base,
      runs: runs.map((x) => `${x.kind} ${x.r.rps.toFixed(0)}`).join(', '),
    };
  } finally {
    for (const s of started) await s.stop();
  }
}

if (isMain(import.meta.url)) {
  const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const preload = option('preload');
  if (!preload)
    throw new Error(
      'usage: tsx bench/ab.ts --preload=./bench/no-request-log-preload.ts [--endpoint=createTask] [--seconds=5]',
    );
  const endpoint = (option('endpoint') ?? 'createTask') as 'createTask' | 'quote' | 'recordInfo';
  const r = await ab(preload, endpoint, Number(option('seconds') ?? 5));
  console.log(
    `${endpoint}: without ${r.base.toFixed(0)} req/s, with ${preload} ${r.preloaded.toFixed(0)} req/s: x${r.ratio.toFixed(2)} (runs ${r.runs})`,
  );
}
