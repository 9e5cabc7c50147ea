/** `mediaforge deployments check|status` and `mediaforge report margin` (docs/deployments.md). */
import { buildDeployments } from '../../routing/build.js';
import { DeploymentsFileError, type DeploymentsPlan, loadDeploymentsFile } from '../../routing/deployments-file.js';
import { probeLine, probeUpstreams, type UpstreamProbe } from '../../routing/probe-upstreams.js';
import { marginReport } from '../../routing/margin.js';
import { type DeploymentStatusReport, deploymentsStatus } from '../../routing/status.js';
import { readServedPlan } from '../../routing/served-plan.js';
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
    const probes = values.probe === true ? await probeAll(cfg, plan) : undefined;
    const ok = probes?.every((p) => p.ok) ?? true;
    print(
      values,
      {
        ok,
        file,
        upstreams: [...plan.upstreams.values()].map((u) => ({ name: u.name, kind: u.kind })),
        models: routed,
        ...(probes ? { probes } : {}),
      },
      [
        `${file}: ok (${count(plan.upstreams.size, 'upstream')}, ${count(routed.length, 'model')} routed)`,
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

/** The probes of every upstream of the plan, as serve runs them at start. */
async function probeAll(cfg: Config, plan: DeploymentsPlan): Promise<UpstreamProbe[]> {
  const deployments = buildDeployments(cfg, () => Date.now(), plan);
  try {
    return await probeUpstreams(deployments);
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
 * `deployments status`: each deployment's state, in flight, submits and failures, from the
 * database. It only reads, so it needs no upstream key; without --deployments it reads the plan
 * the service recorded at its start (runtime/routing/served-plan.ts).
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
  print(values, { deployments: status }, status.map(statusLine).join('\n'));
  return 0;
}

/** `report margin`: revenue against upstream cost per model and deployment. */
export async function reportMargin({ values }: CommandInput): Promise<number> {
  const since = typeof values.since === 'string' ? Date.parse(values.since) : undefined;
  if (since !== undefined && Number.isNaN(since))
    throw new UsageError('--since must be a date (2025-01-31 or an ISO time)');
  const report = await withCommandDb(config(values), (db) => marginReport(db.kysely, since));
  print(
    values,
    { ...report },
    [
      ...report.rows.map(
        (r) =>
          `${r.model} on ${r.deployment}: ${r.tasks} tasks, revenue ${r.revenueUsd} USD, upstream ${r.upstreamCostUsd} USD (abandoned ${r.abandonedCostUsd} USD), margin ${r.marginUsd} USD`,
      ),
      `total: ${report.totals.tasks} tasks, revenue ${report.totals.revenueUsd} USD, upstream ${report.totals.upstreamCostUsd} USD (abandoned ${report.totals.abandonedCostUsd} USD), margin ${report.totals.marginUsd} USD`,
    ].join('\n'),
  );
  return 0;
}

/** `1 model`, `2 models`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
