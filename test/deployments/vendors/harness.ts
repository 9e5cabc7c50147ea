import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseDeployments } from '../../../runtime/routing/deployments-file.js';
import type { Db } from '../../../runtime/storage/dialect.js';
import { ROOT } from '../../support/catalogue.js';
import { startTestService, type TestService } from '../../support/service.js';

/**
 * What the vendor profiles' suites share: a service whose model routes to two deployments of one
 * profile (`first` above `second`, each its own loopback vendor server), and the task bodies of
 * the catalogue models they route (vendor_b/family_c-2.6: 16:9, 2..10 s, 720p by default, the
 * modes text-to-video and image-to-video, which every one of these vendors serves).
 */
const run = promisify(execFile);

export const TEXT_MODEL = 'vendor_b/family_c-2.6/text-to-video';
export const IMAGE_MODEL = 'vendor_b/family_c-2.6/image-to-video';
export const FRAME = 'https://example.com/first-frame.png';

export const textTask = (prompt: string, extra: Record<string, unknown> = {}) => ({
  model: TEXT_MODEL,
  input: { prompt, ...extra },
});
export const imageTask = (prompt: string, extra: Record<string, unknown> = {}) => ({
  model: IMAGE_MODEL,
  input: { prompt, image_url: FRAME, ...extra },
});

export interface Upstream {
  baseUrl: string;
}

/** A deployments file: each upstream of `kind` with its secret variable, both routes of both models, `first` preferred. */
export function deploymentsFile(
  kind: string,
  upstreams: Record<string, { server: Upstream; secretEnv: string; upstreamModel: string; extra?: string }>,
): string {
  const names = Object.keys(upstreams);
  const routes = (model: string) => [
    `  ${model}:`,
    ...names.map(
      (name, i) =>
        `    - { upstream: ${name}, upstreamModel: "${upstreams[name].upstreamModel}", priority: ${10 - i} }`,
    ),
  ];
  return [
    'upstreams:',
    ...names.map(
      (name) =>
        `  ${name}: { kind: ${kind}, baseUrl: "${upstreams[name].server.baseUrl}", secretEnv: ${upstreams[name].secretEnv}${upstreams[name].extra ?? ''} }`,
    ),
    'models:',
    ...routes(TEXT_MODEL),
    ...routes(IMAGE_MODEL),
  ].join('\n');
}

/** The service (in-process, the real HTTP server and worker) with that deployments file. */
export async function serveDeployments(
  file: string,
  secrets: Record<string, string>,
  settings: { deadlineMs?: number; pollMs?: number } = {},
): Promise<TestService> {
  const plan = parseDeployments('deployments.yaml', file, secrets);
  return startTestService(
    {
      upstreamPollMs: settings.pollMs ?? 50,
      ...(settings.deadlineMs ? { taskDeadlineMs: settings.deadlineMs } : {}),
    },
    { deploymentsPlan: plan },
  );
}

/** The task's row as the database holds it: where it went and its upstream handle. */
export async function taskRow(t: TestService, taskId: string) {
  return t.service.ctx.db.kysely.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
}

/** Waits until `check` holds (a bounded wait: the caller's expectation fails after it). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  for (const until = Date.now() + timeoutMs; !(await check()) && Date.now() < until; )
    await new Promise((r) => setTimeout(r, 25));
}

/** `mediaforge report margin --json` of a serve process's database, as an operator runs it. */
export async function marginReport(env: NodeJS.ProcessEnv): Promise<any> {
  const { stdout } = await run(process.execPath, [join(ROOT, 'bin/mediaforge.js'), 'report', 'margin', '--json'], {
    env: { ...process.env, ...env },
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

/** Waits until the task's upstream job's end is recorded (reconciliation); its row then. */
export async function untilReconciled(db: Db, taskId: string, timeoutMs = 20_000) {
  const row = () =>
    db.kysely
      .selectFrom('tasks')
      .select(['state', 'upstream_final_state', 'upstream_cost_micros'])
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
  await eventually(async () => (await row()).upstream_final_state !== null, timeoutMs);
  return row();
}
