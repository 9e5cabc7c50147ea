/**
 * Diagnosis only: quote's own work outside the database and Fastify, in one process, A against B:
 * prepareRequest (validation, price, fingerprint), the asset-reference check and signQuote on the
 * typical body, each tree's modules imported from its own checkout, in alternating rounds. Prints
 * the lowest and the median microseconds per quote of each tree (the shared machine's load bends
 * single rounds; the lowest is the least bent).
 *   tsx bench/quote-path-ab.ts --base=/work/wt-base [--rounds=8] [--count=20000]
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MODEL, ROOT, TYPICAL_INPUT } from './support.js';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const base = option('base');
if (!base) throw new Error('usage: tsx bench/quote-path-ab.ts --base=DIR [--rounds=8] [--count=20000]');
const rounds = Number(option('rounds') ?? 8);
const count = Number(option('count') ?? 20_000);

type QuotePath = () => Promise<string>;

async function quotePath(root: string): Promise<QuotePath> {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { prepareRequest } = await load('runtime/tasks/prepare-request.ts');
  const { applyAssetReferences } = await load('runtime/assets/references.ts');
  const { signQuote } = await load('runtime/quotes/quotes.ts');
  // No reference of the typical body is an asset: the check never reaches the database.
  const ctx = {} as never;
  const owner = { accountId: 'acc_bench', library: 'default' };
  const policy = { allowPrivate: false, allowInsecure: false };
  const body = JSON.stringify({ model: MODEL, input: TYPICAL_INPUT });
  return async () => {
    const request = await prepareRequest(JSON.parse(body), policy);
    await applyAssetReferences(ctx, owner, request);
    return signQuote('bench-secret-0123456789abcdefghijklmnopqrstu', {
      accountId: owner.accountId,
      keyId: 'key_bench',
      fingerprint: request.fingerprint,
      estimatedCredits: request.price.estimatedCredits,
      maxCredits: request.price.maxCredits,
      expiresAt: 1_800_000_000_000,
    });
  };
}

const trees = { A: await quotePath(base), B: await quotePath(ROOT) };
const [a, b] = [await trees.A(), await trees.B()];
if (a !== b) throw new Error(`the trees sign different quotes: ${a} / ${b}`);
const us: Record<'A' | 'B', number[]> = { A: [], B: [] };
for (let round = 0; round < rounds; round++) {
  for (const kind of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
    const run = trees[kind];
    const start = process.cpuUsage();
    for (let i = 0; i < count; i++) await run();
    const used = process.cpuUsage(start);
    us[kind].push((used.user + used.system) / count);
  }
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const line = (k: 'A' | 'B') => `${k} min ${Math.min(...us[k]).toFixed(1)} µs, median ${median(us[k]).toFixed(1)} µs`;
console.log(
  `quote path (same quote id from both trees): ${line('A')}; ${line('B')}; A/B by median ${(median(us.A) / median(us.B)).toFixed(2)}`,
);
