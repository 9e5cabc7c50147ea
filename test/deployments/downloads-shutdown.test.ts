import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { askedClip } from '../../support/media/fixtures.js';
import { bodyD, PRICE_D } from '../http/helpers.js';
import { eventually } from '../support/eventually.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { drip } from '../../support/upstreams/slow-results.js';
import { call, startMediaforge, waitForTask, type MediaforgeProcess } from './support.js';

/** A real `mediaforge serve` whose one model runs on `upstream`, with a 1 s shutdown grace. */
function serveOn(name: string, upstream: JobsProtocolServer): Promise<MediaforgeProcess> {
  return startMediaforge(
    name,
    {
      MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml',
      MEDIAFORGE_SHUTDOWN_GRACE_SECONDS: '1',
      MEDIAFORGE_UPSTREAM_POLL_MS: '50',
    },
    {
      'deployments.yaml': [
        'upstreams:',
        `  up: { kind: jobs, baseUrl: "${upstream.baseUrl}" }`,
        'models:',
        `  ${bodyD().model}:`,
        '    - upstream: up',
      ].join('\n'),
    },
  );
}

/** Sends SIGTERM and waits for the exit: its code, or what says it still ran `withinMs` later. */
function stopWithSigterm(proc: MediaforgeProcess, withinMs: number): Promise<unknown> {
  proc.server.child.kill('SIGTERM');
  return Promise.race([
    proc.server.exited,
    new Promise((resolve) => setTimeout(() => resolve(`still running ${withinMs / 1000} s after SIGTERM`), withinMs)),
  ]);
}

/** The task's poll, cut by the shutdown, is neither done nor leased: the next process runs it again. */
async function expectPollLeftToRunAgain(proc: MediaforgeProcess, taskId: string) {
  const polls = await proc.db.kysely
    .selectFrom('work_items')
    .select(['done_at', 'lease_owner', 'lease_until'])
    .where('task_id', '=', taskId)
    .where('kind', '=', 'poll')
    .execute();
  expect(polls).toEqual([{ done_at: null, lease_owner: null, lease_until: null }]);
}

/**
 * SIGTERM during a result download (issue 25, N11), on a real `mediaforge serve`: after
 * MEDIAFORGE_SHUTDOWN_GRACE_SECONDS the download is aborted and the process exits 0; the poll item
 * is left to run again (not done, its lease released), nothing is half stored; after a restart the
 * result is fetched again and the task succeeds once, charged once.
 */
describe('SIGTERM while a result downloads', () => {
  let proc: MediaforgeProcess | undefined;
  let server: JobsProtocolServer | undefined;
  afterEach(async () => {
    await proc?.stop();
    proc = undefined;
    await server?.close();
    server = undefined;
  });

  it('aborts the download after the grace, exits, and leaves the item to run again after the restart', async () => {
    // The first download drips for a minute; the one after the restart is quick.
    server = await new JobsProtocolServer({
      latencyMs: 100,
      result: (job, n) =>
        n === 1
          ? drip(askedClip(job.model, job.input, job.seconds), 60_000)
          : askedClip(job.model, job.input, job.seconds),
    }).start();
    proc = await serveOn('shutdown', server);
    const { accountId, apiKey } = await proc.account(1000);
    const created = await call(
      proc.url,
      'POST',
      '/api/v1/jobs/createTask',
      apiKey,
      bodyD('stopped mid-download, Picture 1'),
    );
    const taskId: string = created.body.data.taskId;
    await eventually(() => server!.results.open > 0, 'the download to start');

    expect(await stopWithSigterm(proc, 20_000)).toBe(0);
    // The server hears of the closed connection at its next piece.
    for (const end = Date.now() + 5000; server.results.open > 0 && Date.now() < end; )
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(server.results).toMatchObject({ open: 0, completed: 0, cut: 1 });
    const db = proc.db.kysely;
    await expectPollLeftToRunAgain(proc, taskId);
    const row = await db.selectFrom('tasks').select('state').where('id', '=', taskId).executeTakeFirstOrThrow();
    expect(row.state).toBe('running');
    const blobs = join(proc.dir, 'blobs');
    const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
    expect(list(join(blobs, 'outputs', taskId))).toEqual([]);
    expect(list(join(blobs, '.partial'))).toEqual([]);

    await proc.restart();
    const task = await waitForTask(proc.url, apiKey, taskId);
    expect(task.state).toBe('succeeded');
    expect(server.downloads).toBe(2);
    expect(server.results).toMatchObject({ open: 0, completed: 0, cut: 1 });
    // One output, under a key of the claim that stored it (issue 37): the cut claim left nothing.
    expect(list(join(blobs, 'outputs', taskId))).toEqual([expect.stringMatching(/^c_[\w-]+-0\.mp4$/)]);
    const wallet = await db
      .selectFrom('wallets')
      .select(['held', 'spent'])
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(wallet).toEqual({ held: 0, spent: PRICE_D });
    const entries = await db.selectFrom('ledger_entries').select('kind').where('task_id', '=', taskId).execute();
    expect(entries.map((e) => e.kind).sort()).toEqual(['hold', 'settle']);
  });

  it("issue 37: SIGTERM while a poll's status request hangs: the request is cut after the grace (not at its 20 s timeout), the poll is left to run again, uncounted, and succeeds after the restart", async () => {
    server = await new JobsProtocolServer({ latencyMs: 100 }).start();
    server.holdPolls = true;
    proc = await serveOn('shutdown-poll', server);
    const { apiKey } = await proc.account(1000);
    const created = await call(proc.url, 'POST', '/api/v1/jobs/createTask', apiKey, bodyD('status hangs, Picture 1'));
    const taskId: string = created.body.data.taskId;
    await eventually(() => server!.heldPolls.open > 0, 'the poll to start');
    // Well inside the status request's own 20 s timeout: before, the process waited for it.
    expect(await stopWithSigterm(proc, 12_000)).toBe(0);
    expect(server.heldPolls).toEqual({ open: 0, closedByClient: 1 });
    const db = proc.db.kysely;
    await expectPollLeftToRunAgain(proc, taskId);
    // Cut by the shutdown, not a failure of the upstream: nothing counted against it.
    const health = await db
      .selectFrom('upstream_health')
      .select('consecutive_failures')
      .where('name', '=', 'up')
      .execute();
    expect(health.filter((h) => h.consecutive_failures > 0)).toEqual([]);
    server.holdPolls = false;
    await proc.restart();
    expect((await waitForTask(proc.url, apiKey, taskId)).state).toBe('succeeded');
  }, 60_000);
});
