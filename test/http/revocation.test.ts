import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/root.js';
import { startTestService, type TestService } from '../support/service.js';
import { spawnServer, type ServerProcess } from '../reliability/support.js';
import { createKey } from '../../runtime/accounts/accounts.js';
import { bodyD, createTask, expectError, expectOk } from './helpers.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'bin/mediaforge.js');

/**
 * A key revoked with the CLI (its own process) is refused on the very next request to every
 * server process on the database, even one whose authentication cache vouched for it a moment
 * before: SQLite by the revision row each request reads, PostgreSQL by the revocation NOTIFY.
 */
describe('revocation reaches every process at once', () => {
  let t: TestService;
  let other: ServerProcess;
  beforeAll(async () => {
    t = await startTestService();
    other = await spawnServer({
      MEDIAFORGE_DB: t.config.dbUrl,
      MEDIAFORGE_DATA_DIR: t.config.dataDir,
      MEDIAFORGE_SECRET: 'test-secret',
      MEDIAFORGE_ROLE: 'api',
      MEDIAFORGE_RATE_LIMIT_PER_MINUTE: '100000',
    });
  }, 60_000);
  afterAll(async () => {
    other?.child.kill('SIGTERM');
    await other?.exited;
    await t?.close();
  });

  const get = (url: string, key: string) =>
    fetch(`${url}/api/v1/chat/credit`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      body: await r.json(),
    }));

  it('a key in use on two processes is refused by both on the next request after `keys revoke`', async () => {
    const { accountId, apiKey: sibling } = await t.account(100);
    const { apiKey, keyId } = await createKey(t.service.ctx.db, accountId, 'personal', Date.now());
    // Both processes have looked the key up: their caches vouch for it now.
    for (const url of [t.url, other.url]) expectOk(await get(url, apiKey));

    const revoked = await run(process.execPath, [CLI, 'keys', 'revoke', '--key', keyId, '--json'], {
      env: { ...process.env, MEDIAFORGE_DB: t.config.dbUrl },
    });
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: true });

    for (const url of [t.url, other.url]) expectError(await get(url, apiKey), 401, 40101);
    expectError(await createTask(t, apiKey, bodyD()), 401, 40101);
    // The sibling key of the same account is not touched, and nothing was held.
    for (const url of [t.url, other.url])
      expect((await get(url, sibling)).body.data).toMatchObject({ available: 100, held: 0 });
    await t.checkLedger(accountId);
  }, 30_000);
});
