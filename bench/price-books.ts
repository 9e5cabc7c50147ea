/**
 * quoteWithPriceBookVsWithout (issue 40): quote's rate for an account on a price book against an
 * account on the published prices, side by side on one service in one run: the runs alternate
 * (without, with, with, without, ...) and each side's rate is pooled over its runs, so a slow
 * patch of the shared machine weighs on both. The book's step is a map lookup and one ceiling
 * (runtime/accounts/book-price.ts); the target is >= 0.95.
 */
import { setAccountPriceBook } from '../runtime/accounts/price-book.js';
import { CLI_OPERATOR } from '../runtime/operator/operator-actions.js';
import {
  cannon,
  cannonOptions,
  checkMostlyOk,
  createAccounts,
  durations,
  endpointShapes,
  isMain,
  newServiceDir,
  pooledRate,
  prepareDatabase,
  round,
  settle,
  sqliteUrl,
  startService,
  type BenchOutput,
  type LoadResult,
  type RunMode,
} from './support.js';
import { CONNECTIONS } from './http.js';

export async function benchPriceBooks(mode: RunMode): Promise<BenchOutput> {
  const d = durations(mode);
  const dir = newServiceDir();
  const dbUrl = sqliteUrl(dir);
  const [withBook, without] = await createAccounts(dbUrl, 2);
  await prepareDatabase(dbUrl, (db) =>
    setAccountPriceBook(db, CLI_OPERATOR, withBook.accountId, 'partner', Date.now()),
  );
  const service = await startService({ dir, dbUrl, removeDir: true });
  try {
    // A quote needs no task: the shapes' task id is never read.
    const shapes = {
      with: endpointShapes(withBook.apiKey, 'none').quote,
      without: endpointShapes(without.apiKey, 'none').quote,
    };
    for (const shape of [shapes.without, shapes.with])
      await cannon(cannonOptions(service.url, shape, CONNECTIONS, d.warmupSeconds));
    const runs: Record<'with' | 'without', LoadResult[]> = { with: [], without: [] };
    const rounds = mode.quick ? 2 : 4;
    // ABBA order: whichever side runs second in a round would otherwise always meet the machine's later state.
    for (let i = 0; i < rounds; i++)
      for (const side of i % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
        await settle(service.pid, d.settleMs);
        const run = await cannon(cannonOptions(service.url, shapes[side], CONNECTIONS, d.peakSeconds));
        checkMostlyOk(`quote ${side} a price book`, run);
        runs[side].push(run);
      }
    const rate = { with: pooledRate('with', runs.with), without: pooledRate('without', runs.without) };
    return {
      figures: { quoteWithPriceBookVsWithout: round(rate.with / rate.without, 3) },
      notes: [
        `price-books: quote ${rate.with.toFixed(0)} req/s on the partner book, ${rate.without.toFixed(0)} req/s on the published prices (${rounds} alternating runs of ${d.peakSeconds} s each, ${CONNECTIONS} connections, one service)`,
      ],
    };
  } finally {
    await service.stop();
  }
}

if (isMain(import.meta.url)) {
  console.log(JSON.stringify(await benchPriceBooks({ quick: process.argv.includes('--quick') })));
}
