/** `mediaforge deployments check|status` and `mediaforge report margin` (docs/deployments.md). */
import { buildDeployments } from '../../routing/build.js';
import { DeploymentsFileError, type DeploymentsPlan, loadDeploymentsFile } from '../../routing/deployments-file.js';
import { probeFailed, probeLine, probeUpstreams } from '../../routing/probe-upstreams.js';
import { defaultRequestLine, defaultRequestWarnings, notServedByKinds } from '../../routing/plan-coverage.js';
import type { Deployments } from '../../routing/router.js';
import { marginByBook, marginReport, type MarginReport } from '../../routing/margin.js';
import { type DeploymentStatusReport, deploymentsStatus } from '../../routing/status.js';
import { readServedPlan } from '../../routing/served-plan.js';
import { databaseName } from '../../storage/database-name.js';
import { type Config, configFromEnv, processEnvironment } from '../../config.js';
import { withCommandDb } from '../command-db.js';
import type { CommandInput } from '../commands.js';
import { printSafe } from '../terminal-text.js';
import { UsageError } from '../usage-error.js';

type Values = CommandInput['values'];

function print(values: Values, value: Record<string, unknown>, text: string) {
  printSafe(Boolean(values.json), value, text);
}

function config(values: Values) {
  return configFromEnv(
    processEnvironment({
      MEDIAFORGE_DB: typeof values.db === 'string' ? values.db : undefined,
      MEDIAFORGE_DEPLOYMENTS: typeof values.deployments === 'string' ? values.deployments : undefined,
    }),
  );
}

/** `deployments check`: the file read and checked as serve would, nothing started; problems as file:line:col. */
export async function deploymentsCheck({ values }: CommandInput): Promise<number> {
  const cfg = config(values);
  const file = cfg.deploymentsFile;
  if (!file) throw new UsageError('deployments check needs --deployments FILE (or MEDIAFORGE_DEPLOYMENTS)');
  try {
    const plan = loadDeploymentsFile(file, cfg.environment);
    const routed = [...plan.routes.keys()];
    const { probes, warnings } = await withDeployments(cfg, plan, async (deployments) => ({
      probes: values.probe === true ? await probeUpstreams(deployments) : undefined,
      warnings: defaultRequestWarnings(plan, deployments),
    }));
    const notServed = notServedByKinds(plan);
    // A profile without a probe is not a failure: there is nothing to ask it.
    const ok = !probes?.some(probeFailed);
    print(
      values,
      {
        ok,
        file,
        upstreams: [...plan.upstreams.values()].map((u) => ({ name: u.name, kind: u.kind })),
        models: routed,
        ...(warnings.length ? { warnings } : {}),
        ...(Object.keys(notServed).length ? { notServed } : {}),
        ...(probes ? { probes } : {}),
      },
      [
        `${file}: ok (${count(plan.upstreams.size, 'upstream')}, ${count(routed.length, 'model')} routed)`,
        ...warnings.map(defaultRequestLine),
        ...Object.entries(notServed).flatMap(([kind, list]) => [
          `kind ${kind} does not serve ${count(list.length, 'model')} of the catalogue:`,
          ...list.map((m) => `  ${m.model}: ${m.why}`),
        ]),
        ...(probes ?? []).map(probeLine),
      ].join('\n'),
    );
    return ok ? 0 : 1;
  } catch (error) {
    if (!(error instanceof DeploymentsFileError)) throw error;
    if (values.json) console.log(JSON.stringify({ ok: false, file, problems: error.problems }));
    else console.error(error.problems.join('\n'));
    return 1;
  }
}

/** The plan's deployments, built as serve builds them, for what the check asks of them (probes, the default requests). */
async function withDeployments<T>(cfg: Config, plan: DeploymentsPlan, use: (d: Deployments) => Promise<T>): Promise<T> {
  const deployments = buildDeployments(cfg, () => Date.now(), plan);
  try {
    return await use(deployments);
  } finally {
    deployments.close();
  }
}

/** One deployment of `deployments status` as text: its state, counts, and why it last failed. */
function statusLine(d: DeploymentStatusReport): string {
  const failures = Object.values(d.failures).reduce((a, n) => a + n, 0);
  return [
    `${d.name} (${d.kind}) ${d.state} in flight ${d.inFlight}${d.maxInFlight === null ? '' : `/${d.maxInFlight}`}`,
    `submits ${d.submits} failures ${failures}`,
    ...(d.coolingUntil ? [`cooling until ${d.coolingUntil}`] : []),
    ...(d.lastFailure ? [`last failure${d.lastFailureAt ? ` at ${d.lastFailureAt}` : ''}: ${d.lastFailure}`] : []),
  ].join(' ');
}

/**
 * `deployments status`: the database it read (first: a status read from the wrong database looks
 * like any other), then each deployment's state, in flight, submits and failures, from that
 * database; `no record` for a deployment it holds nothing about (runtime/routing/status.ts). It
 * only reads, so it needs no upstream key; without --deployments it reads the plan the service
 * recorded at its start (runtime/routing/served-plan.ts).
 */
export async function deploymentsStatusCommand({ values }: CommandInput): Promise<number> {
  const cfg = config(values);
  const status = await withCommandDb(cfg, async (db) => {
    const plan = cfg.deploymentsFile
      ? loadDeploymentsFile(cfg.deploymentsFile, cfg.environment, { withoutSecrets: true })
      : await readServedPlan(db, cfg.environment);
    const deployments = buildDeployments(cfg, () => Date.now(), plan);
    try {
      return await deploymentsStatus(db, deployments, Date.now());
    } finally {
      deployments.close();
    }
  });
  const database = databaseName(cfg.dbUrl);
  print(values, { database, deployments: status }, [`database ${database}`, ...status.map(statusLine)].join('\n'));
  return 0;
}

/** `report margin`: revenue against upstream cost per model and deployment. */
export async function reportMargin({ values }: CommandInput): Promise<number> {
  const since = typeof values.since === 'string' ? Date.parse(values.since) : undefined;
  if (since !== undefined && Number.isNaN(since))
    throw new UsageError('--since must be a date (2025-01-31 or an ISO time)');
  const [report, byBook] = await withCommandDb(config(values), (db) =>
    Promise.all([marginReport(db.kysely, since), marginByBook(db.kysely, since)]),
  );
  print(
    values,
    { ...report, ...byBook },
    [
      ...report.rows.map((r) => `${r.model} on ${r.deployment}: ${marginLine(r)}`),
      `total: ${marginLine(report.totals)}`,
      ...byBook.books.map(
        (b) =>
          `book ${b.book}: ${b.tasks} tasks, revenue ${b.revenueUsd} USD, upstream ${b.upstreamCostUsd} USD, margin ${b.marginUsd} USD`,
      ),
      ...byBook.belowCost.map(
        (w) =>
          `warning: book ${w.book} prices ${w.model} below its declared upstream cost (${w.tasks} tasks: revenue ${w.revenueUsd} USD, cost ${w.upstreamCostUsd} USD)`,
      ),
    ].join('\n'),
  );
  return 0;
}

/**
 * One line of the margin report. Succeeded tasks without a declared cost are marked (their cost
 * counts 0): with none declared at all the margin is not known, never a 100 % margin; with some, it
 * is overstated. Jobs an unknown submit may have made are counted beside (not in) the cost.
 */
function marginLine(r: MarginReport['totals']): string {
  const margin =
    r.succeededWithoutCost > 0 && r.succeededWithoutCost === r.succeeded && r.upstreamCostUsd === '0.000000'
      ? `margin not known (no cost declared for its ${count(r.succeededWithoutCost, 'succeeded task')})`
      : r.succeededWithoutCost > 0
        ? `margin ${r.marginUsd} USD, overstated (${count(r.succeededWithoutCost, 'succeeded task')} without a declared cost)`
        : `margin ${r.marginUsd} USD`;
  const possibly =
    r.possiblyAbandoned > 0
      ? `, possibly abandoned ${r.possiblyAbandoned} (${r.possiblyAbandonedCostUsd} USD declared)`
      : '';
  return `${r.tasks} tasks, revenue ${r.revenueUsd} USD, upstream ${r.upstreamCostUsd} USD (abandoned ${r.abandonedCostUsd} USD)${possibly}, ${margin}`;
}

/** `1 model`, `2 models`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
