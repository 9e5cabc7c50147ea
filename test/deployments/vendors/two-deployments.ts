import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseDeployments } from '../../../runtime/routing/deployments-file.js';
import { ROOT } from '../../support/catalogue.js';
import { startTestService, type TestService } from '../../support/service.js';
import type { MediaforgeProcess } from '../support.js';

/**
 * What the minimax, dashscope and ark suites share: a service whose models route to two
 * deployments of one profile, `first` (the server under test) above `second` (a healthy one),
 * each its own loopback vendor server; and the deployments file that says so.
 */
export interface Route {
  model: string;
  upstreamModel: string;
}

export function deploymentsFile(kind: string, baseUrls: { first: string; second?: string }, routes: Route[]): string {
  const names = Object.keys(baseUrls).filter((n) => baseUrls[n as keyof typeof baseUrls] !== undefined);
  return [
    'upstreams:',
    ...names.map(
      (name) =>
        `  ${name}: { kind: ${kind}, baseUrl: "${baseUrls[name as keyof typeof baseUrls]}", secretEnv: VENDOR_KEY }`,
    ),
    'models:',
    ...routes.flatMap(({ model, upstreamModel }) => [
      `  ${model}:`,
      ...names.map((name, i) => `    - { upstream: ${name}, upstreamModel: "${upstreamModel}", priority: ${10 - i} }`),
    ]),
  ].join('\n');
}

/** The service in-process (its real HTTP server and worker) with that deployments file; the key is VENDOR_KEY. */
export async function serveDeployments(
  file: string,
  key: string,
  settings: { deadlineMs?: number; pollMs?: number } = {},
): Promise<TestService> {
  return startTestService(
    { upstreamPollMs: settings.pollMs ?? 50, ...(settings.deadlineMs ? { taskDeadlineMs: settings.deadlineMs } : {}) },
    { deploymentsPlan: parseDeployments('deployments.yaml', file, { VENDOR_KEY: key }) },
  );
}

// The task's row and the bounded wait are the other vendor harness's (one definition each).
export { eventually, taskRow } from './harness.js';

/** The task's reconciliation once recorded (its upstream job's end and cost), or what there is when the time is up. */
export async function reconciled(proc: MediaforgeProcess, taskId: string, timeoutMs = 20_000) {
  const rowOf = () =>
    proc.db.kysely
      .selectFrom('tasks')
      .select(['state', 'upstream_final_state', 'upstream_cost_micros'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
  for (const until = Date.now() + timeoutMs; (await rowOf()).upstream_final_state === null && Date.now() < until; )
    await new Promise((r) => setTimeout(r, 50));
  return rowOf();
}

/** `mediaforge report margin --json` against the process's database. */
export async function marginReport(proc: MediaforgeProcess): Promise<{ rows: Record<string, unknown>[] }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'bin/mediaforge.js'), 'report', 'margin', '--json'],
    { env: { ...process.env, ...proc.env } },
  );
  return JSON.parse(stdout);
}

/** The account's wallet as the process's database holds it. */
export function walletOf(proc: MediaforgeProcess, accountId: string) {
  return proc.db.kysely
    .selectFrom('wallets')
    .select(['held', 'spent'])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
}
