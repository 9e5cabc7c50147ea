import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import type { Db } from '../../runtime/storage/dialect.js';
import { eventually } from '../support/eventually.js';
import { ROOT } from '../support/root.js';
import { startTestService, type TestService } from '../support/service.js';
import { referenceUrl } from '../support/reference-url.js';
import { type PlanTiming, timingConfig } from './support.js';

/**
 * A service over provider-profile deployments (kling.test.ts, unknown-submits-found.test.ts): a service whose models
 * route to deployments of one profile (`first` above `second`, each its own loopback vendor
 * server, support/upstreams/vendors/), the deployments file that says so, the task bodies of the
 * catalogue models they route (vendor_b/family_c-2.6: 16:9, 2..10 s, 720p by default, the modes
 * text-to-video and image-to-video, which every one of these vendors serves), and a task's row.
 * What every adapter shares (failover, deadlines, cancels, SIGKILL, reconciliation) is the
 * behaviour suite's (./adapter-behaviour.test.ts); Kling's own wire is kling.test.ts.
 */
export const TEXT_MODEL = 'vendor_b/family_c-2.6/text-to-video';
export const IMAGE_MODEL = 'vendor_b/family_c-2.6/image-to-video';
export const FRAME = referenceUrl('/first-frame.png');

export const textTask = (prompt: string, extra: Record<string, unknown> = {}) => ({
  model: TEXT_MODEL,
  input: { prompt, ...extra },
});
export const imageTask = (prompt: string, extra: Record<string, unknown> = {}) => ({
  model: IMAGE_MODEL,
  input: { prompt, image_url: FRAME, ...extra },
});

/** One model's route: the catalogue model and its name at the vendor. */
export interface Route {
  model: string;
  upstreamModel: string;
}

/** The text and image models of TEXT_MODEL and IMAGE_MODEL, both under one vendor model name. */
export const bothModels = (upstreamModel: string): Route[] => [
  { model: TEXT_MODEL, upstreamModel },
  { model: IMAGE_MODEL, upstreamModel },
];

/** An upstream of the file: its baseUrl (the key in VENDOR_KEY), or with its own secret variable and more settings. */
export type UpstreamEntry = string | { baseUrl: string; secretEnv?: string; extra?: string } | undefined;

/** A deployments file: each upstream of `kind` with its secret variable, every route on every upstream, the first named preferred. */
export function deploymentsFile(kind: string, upstreams: Record<string, UpstreamEntry>, routes: Route[]): string {
  const entries = Object.entries(upstreams).flatMap(([name, entry]) =>
    entry === undefined ? [] : [{ name, ...(typeof entry === 'string' ? { baseUrl: entry } : entry) }],
  );
  return [
    'upstreams:',
    ...entries.map(
      (u) =>
        `  ${u.name}: { kind: ${kind}, baseUrl: "${u.baseUrl}", secretEnv: ${u.secretEnv ?? 'VENDOR_KEY'}${u.extra ?? ''} }`,
    ),
    'models:',
    ...routes.flatMap(({ model, upstreamModel }) => [
      `  ${model}:`,
      ...entries.map((u, i) => `    - { upstream: ${u.name}, upstreamModel: "${upstreamModel}", priority: ${10 - i} }`),
    ]),
  ].join('\n');
}

/** The service in-process (its real HTTP server and worker) with that deployments file; a lone key is VENDOR_KEY's. */
export async function serveDeployments(
  file: string,
  secrets: Record<string, string> | string,
  settings: PlanTiming = {},
): Promise<TestService> {
  const environment = typeof secrets === 'string' ? { VENDOR_KEY: secrets } : secrets;
  return startTestService(timingConfig(settings), {
    deploymentsPlan: parseDeployments('deployments.yaml', file, environment),
  });
}

/** The task's row as the database holds it: where it went and its upstream handle. */
export async function taskRow(t: TestService, taskId: string) {
  return t.service.ctx.db.kysely.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
}

const run = promisify(execFile);

/** `mediaforge report margin --json` against a serve process's database, as an operator runs it. */
export async function marginReport(proc: { env: NodeJS.ProcessEnv }): Promise<any> {
  const { stdout } = await run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'report', 'margin', '--json'], {
    env: { ...process.env, ...proc.env },
  });
  return JSON.parse(stdout);
}

/** A task created on a serve process; its id. */
export async function createOn(url: string, apiKey: string, body: unknown): Promise<string> {
  const created = await fetch(`${url}/api/v1/jobs/createTask`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => r.json());
  return created.data.taskId as string;
}

/** The task's reconciliation once recorded (its upstream job's end and cost); throws when the time is up. */
export async function reconciled(db: Db, taskId: string, timeoutMs = 20_000) {
  const row = () =>
    db.kysely
      .selectFrom('tasks')
      .select(['state', 'upstream_final_state', 'upstream_cost_micros'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
  await eventually(
    async () => (await row()).upstream_final_state !== null,
    `the reconciliation of ${taskId}`,
    timeoutMs,
  );
  return row();
}
