/**
 * `mediaforge serve` on a port that is taken: it must exit at once with status 1 and a clear line,
 * and its worker must never have started, so none of the tasks queued on the shared database for
 * the first service is run by it. (Signals to `npm start` are in test/packaging/production-tree.test.ts.)
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/build.js';
import { startTestService, type TestService } from '../support/service.js';
import { bodyD, createTask } from '../http/helpers.js';

describe('serve on a busy port', () => {
  let t: TestService;
  beforeAll(async () => {
    // The first service's worker stays stopped: whatever runs a task here can only be the second process.
    t = await startTestService({}, { startWorker: false });
  });
  afterAll(async () => t?.close());

  it('exits 1 at once naming the port, and runs none of the queued tasks', async () => {
    const { apiKey } = await t.account(100_000);
    const taskIds: string[] = [];
    for (let i = 0; i < 6; i++) taskIds.push((await createTask(t, apiKey, bodyD(`queued task ${i}`))).body.data.taskId);
    const port = new URL(t.url).port;
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [join(ROOT, 'bin/mediaforge.js'), 'serve', '--port', port, '--host', '127.0.0.1'],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          MEDIAFORGE_DB: t.config.dbUrl,
          MEDIAFORGE_DATA_DIR: t.config.dataDir,
          MEDIAFORGE_SECRET: 'test-secret',
          MEDIAFORGE_SIMULATOR_LATENCY_MS: '10',
          MEDIAFORGE_WORKER_IDLE_MS: '10',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain(`mediaforge: cannot listen: port ${port} on 127.0.0.1 is already in use`);
    expect(Date.now() - started).toBeLessThan(20_000); // it exits by itself (a hang would hit the test timeout)
    const states = await t.service.ctx.db.kysely
      .selectFrom('tasks')
      .select(['id', 'state'])
      .where('id', 'in', taskIds)
      .execute();
    expect(states.map((row) => row.state)).toEqual(taskIds.map(() => 'queued'));
  }, 60_000);
});
