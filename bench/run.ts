/**
 * npm run bench [-- --quick] [-- --only=http,waits,...]
 * Runs every benchmark in turn, prints a table (figure, value, target, verdict) and the notes, and
 * as the LAST line of output one JSON object holding every figure by name (null when it could not
 * be measured in this run; the notes say why). --quick: shorter runs, fewer requests, the same
 * figures (generate1000Seconds is null), under 2 minutes on a quiet 2-core machine.
 */
import { cpus, loadavg } from 'node:os';
import { benchBacklog } from './backlog.js';
import { benchCli } from './cli.js';
import { benchEndToEnd } from './end-to-end.js';
import { timeGeneration } from './generate.js';
import { benchGrowth } from './growth.js';
import { benchHostile } from './hostile.js';
import { benchHttp } from './http.js';
import { benchLedger } from './ledger.js';
import { benchKeyPolicy } from './key-policy.js';
import { benchMediaRanges } from './media-ranges.js';
import { benchMemory } from './memory.js';
import { benchReferenceCheck } from './reference-check.js';
import { benchS3Store } from './s3-store.js';
import { benchPostgres } from './postgres.js';
import { benchPriceBooks } from './price-books.js';
import { benchProfiles } from './profiles.js';
import { benchSignIns } from './signins.js';
import { benchSimulator } from './simulator.js';
import { benchUpstream } from './upstream.js';
import { benchUsageExport } from './usage-export.js';
import { round, type BenchOutput, type RunMode } from './support.js';
import { benchValidate } from './validate.js';
import { benchWaits } from './waits.js';
import { benchWebhooks } from './webhooks.js';

type Target = { op: '>=' | '<=' | '<' | '='; value: number } | undefined;

/** Every figure of issues 11, 19, 27, 29 and 30 with its target (issue 30's where it set one); others the modules report appear after these. */
const FIGURES: [name: string, target: Target, unit: string][] = [
  ['bareRps', undefined, 'req/s'],
  ['quoteVsBare', { op: '>=', value: 0.3 }, 'ratio'],
  ['recordInfoVsBare', { op: '>=', value: 0.33 }, 'ratio'],
  ['createTaskVsBare', { op: '>=', value: 0.15 }, 'ratio'],
  ['ceilingQuoteRps', undefined, 'req/s'],
  ['ceilingRecordInfoRps', undefined, 'req/s'],
  ['quoteVsCeiling', { op: '>=', value: 0.8 }, 'ratio'],
  ['recordInfoVsCeiling', { op: '>=', value: 0.8 }, 'ratio'],
  ['quoteRps', undefined, 'req/s'],
  ['recordInfoRps', undefined, 'req/s'],
  ['createTaskRps', undefined, 'req/s'],
  ['quoteP50Ms', undefined, 'ms @ half peak'],
  ['quoteP99Ms', undefined, 'ms @ half peak'],
  ['recordInfoP50Ms', undefined, 'ms @ half peak'],
  ['recordInfoP99Ms', undefined, 'ms @ half peak'],
  ['createTaskP50Ms', undefined, 'ms @ half peak'],
  ['createTaskP99Ms', { op: '<=', value: 50 }, 'ms @ half peak'],
  ['apiP99MsDuringBacklog', { op: '<=', value: 50 }, 'ms @ half peak, worker draining'],
  ['tasksPerSecEndToEnd', { op: '>=', value: 1000 }, 'tasks/s'],
  ['pgTasksPerSecEndToEnd', undefined, 'tasks/s'],
  ['pgTasksEndToEndVsSqlite', { op: '>=', value: 0.6 }, 'ratio'],
  ['validatePriceOpsPerSec', { op: '>=', value: 1_000_000 }, 'ops/s, 1 core'],
  ['validateVsZod', { op: '>=', value: 3 }, 'ratio'],
  ['validateVsAjvRuntime', { op: '>=', value: 1 }, 'ratio'],
  ['generate17Seconds', undefined, 's'],
  ['generate170Seconds', undefined, 's'],
  ['generate1000Seconds', { op: '<', value: 10 }, 's'],
  ['waitP99MsAfterFinish', { op: '<', value: 50 }, 'ms'],
  ['waitRssMb', { op: '<', value: 400 }, 'MiB'],
  ['waitLost', { op: '=', value: 0 }, 'requests'],
  ['webhookDeliveriesPerSec', { op: '>=', value: 2000 }, 'deliveries/s'],
  ['webhookBadSignatures', { op: '=', value: 0 }, 'deliveries'],
  ['webhookServiceCpuMsPerDelivery', { op: '<=', value: 1 }, 'ms CPU/task'],
  ['createTaskSameAccountPerSec', undefined, 'req/s'],
  ['createTaskManyAccountsPerSec', undefined, 'req/s'],
  ['sameAccountVsManyAccounts', { op: '>=', value: 0.5 }, 'ratio'],
  ['createTaskWithPolicyPerSec', undefined, 'req/s'],
  ['createTaskWithoutPolicyPerSec', undefined, 'req/s'],
  ['createTaskWithPolicyVsWithout', { op: '>=', value: 0.95 }, 'ratio'],
  // Issue 40: a price book costs quote nothing measurable (bench/price-books.ts).
  ['quoteWithPriceBookVsWithout', { op: '>=', value: 0.95 }, 'ratio'],
  ['pgCreateTaskVsSqlite', { op: '>=', value: 0.35 }, 'ratio'],
  // Issue 42: the same with the requests spread over 100 accounts (bench/postgres.ts).
  ['pgCreateTaskVsSqliteManyAccounts', { op: '>=', value: 0.6 }, 'ratio'],
  ['recordInfoAt1MVsEmpty', { op: '>=', value: 0.8 }, 'ratio'],
  ['createTaskAt1MVsEmpty', { op: '>=', value: 0.8 }, 'ratio'],
  ['listTasksP99MsAt1M', { op: '<', value: 20 }, 'ms'],
  ['workItemsDoneAt1MPerSec', undefined, 'items/s'],
  ['workItemsDoneAt1MVsEmpty', { op: '>=', value: 0.8 }, 'ratio'],
  ['pgWorkItemsDoneAt1MVsEmpty', { op: '>=', value: 0.8 }, 'ratio'],
  ['apiP99MsDuringSignIns', { op: '<', value: 50 }, 'ms'],
  ['hostileBodyValidationMs', { op: '<', value: 50 }, 'ms'],
  ['importRssGrowthMb', { op: '<', value: 100 }, 'MiB'],
  ['referenceCheckRssGrowthMb', { op: '<', value: 100 }, 'MiB'],
  ['upstreamResultRssGrowthMb', { op: '<', value: 100 }, 'MiB'],
  ['upstreamOverheadMs', { op: '<', value: 300 }, 'ms'],
  ['s3UploadRssGrowthMb', { op: '<', value: 100 }, 'MiB'],
  ['slowResultDownloads', { op: '=', value: 1 }, 'fetches'],
  ['profileOverheadMs', { op: '<', value: 300 }, 'ms'],
  ['profilePollsPerSec', { op: '>=', value: 1500 }, 'polls/s'],
  ['cliHelpMs', { op: '<', value: 300 }, 'ms'],
  // Issue 38: process starts (bench/cli.ts); every suite that runs the CLI or a real server pays them.
  ['commandStartMs', undefined, 'ms'],
  ['serveReadyMs', undefined, 'ms'],
  ['usageExportRssGrowthMb', { op: '<', value: 100 }, 'MiB'],
  ['mediaRangeP99Ms', { op: '<', value: 50 }, 'ms @ 200/s paced'],
  ['mediaRangeBarePacedP99Ms', undefined, 'ms @ 200/s paced'],
  ['mediaRangeFullLoadP99Ms', undefined, 'ms @ full load'],
  ['mediaRangeVsBare', undefined, 'ratio'],
];

function verdict(value: number | null, target: Target): string {
  if (!target) return '';
  if (value === null) return 'n/a';
  const ok =
    target.op === '>='
      ? value >= target.value
      : target.op === '<='
        ? value <= target.value
        : target.op === '<'
          ? value < target.value
          : value === target.value;
  return ok ? 'meets' : 'MISSES';
}

async function benchGenerate(mode: RunMode): Promise<BenchOutput> {
  const counts = mode.quick ? [17, 170] : [17, 170, 1000];
  const figures: Record<string, number | null> = {};
  const parts: string[] = [];
  // A first generation loads and compiles the generator's code: done once, not counted.
  await timeGeneration(17);
  for (const count of counts) {
    const r = await timeGeneration(count);
    figures[`generate${count}Seconds`] = round(r.seconds, 3);
    figures[`generate${count}MsPerModel`] = round((r.seconds * 1000) / r.models, 1);
    parts.push(
      `${r.models} models ${r.seconds.toFixed(2)} s (${((r.seconds * 1000) / r.models).toFixed(1)} ms/model, ${r.files} files)`,
    );
  }
  const notes = [
    `generate: load + every plugin in process, nothing written, after one uncounted warm-up generation: ${parts.join('; ')}`,
  ];
  if (mode.quick) {
    figures.generate1000Seconds = null;
    notes.push(
      'generate: generate1000Seconds is null in --quick mode (it alone takes 5-30 s); run the full bench for it',
    );
  } else
    figures.generate1000PerModelVs170 = round(
      (figures.generate1000MsPerModel ?? NaN) / (figures.generate170MsPerModel ?? NaN),
      3,
    );
  return { figures, notes };
}

const BENCHES: [name: string, run: (mode: RunMode) => Promise<BenchOutput>][] = [
  ['validate', benchValidate],
  ['hostile', benchHostile],
  ['http', benchHttp],
  ['waits', benchWaits],
  ['webhooks', benchWebhooks],
  ['end-to-end', benchEndToEnd],
  ['backlog', benchBacklog],
  ['ledger', benchLedger],
  ['key-policy', benchKeyPolicy],
  ['price-books', benchPriceBooks],
  ['postgres', benchPostgres],
  ['signins', benchSignIns],
  ['memory', benchMemory],
  ['reference-check', benchReferenceCheck],
  ['upstream', benchUpstream],
  ['s3-store', benchS3Store],
  ['media-ranges', benchMediaRanges],
  ['profiles', benchProfiles],
  ['generate', benchGenerate],
  ['simulator', benchSimulator],
  ['cli', benchCli],
  ['growth', benchGrowth],
  ['usage-export', benchUsageExport],
];

const quick = process.argv.includes('--quick');
const onlyArg = process.argv.find((a) => a.startsWith('--only='));
const only = onlyArg ? onlyArg.slice('--only='.length).split(',') : undefined;
const mode: RunMode = { quick };
const figures: Record<string, number | null> = {};
const notes: string[] = [];
const timings: string[] = [];
let failed = false;
const startedAt = Date.now();
const loadBefore = loadavg();

console.log(
  `mediaforge bench${quick ? ' --quick' : ''}: ${cpus().length} x ${cpus()[0]?.model ?? '?'}, node ${process.version}, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`,
);
for (const [name, run] of BENCHES) {
  if (only && !only.includes(name)) continue;
  const t0 = Date.now();
  process.stdout.write(`  ${name} ... `);
  try {
    const out = await run(mode);
    Object.assign(figures, out.figures);
    notes.push(...out.notes);
    console.log(`${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } catch (error) {
    failed = true;
    notes.push(`${name}: FAILED: ${(error as Error).stack ?? error}`);
    console.log(`FAILED after ${((Date.now() - t0) / 1000).toFixed(1)} s: ${(error as Error).message}`);
  }
  timings.push(`${name} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
for (const [name] of FIGURES) if (!(name in figures)) figures[name] = null;

// The table: the figures in order, then the extra ones.
const rows: string[][] = [['figure', 'value', 'target', 'verdict', 'unit']];
const known = new Set(FIGURES.map(([name]) => name));
for (const [name, target, unit] of FIGURES)
  rows.push([
    name,
    String(figures[name] ?? 'null'),
    target ? `${target.op} ${target.value}` : '',
    verdict(figures[name] ?? null, target),
    unit,
  ]);
for (const [name, value] of Object.entries(figures))
  if (!known.has(name)) rows.push([name, String(value ?? 'null'), '', '', '']);
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
const line = (r: string[]) => `| ${r.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
console.log('');
console.log(line(rows[0]));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows.slice(1)) console.log(line(r));
console.log('');
for (const note of notes) console.log(`- ${note}`);
const loadAfter = loadavg();
console.log(
  `- run: ${timings.join(', ')}; total ${((Date.now() - startedAt) / 1000).toFixed(1)} s; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
);
if (failed) process.exitCode = 1;
console.log(JSON.stringify(figures));
