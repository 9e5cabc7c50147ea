import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, expectOk } from '../http/helpers.js';
import { putBytes, ticketFor, UNLOCKED } from '../files/support.js';
import { startTestService, TEST_DB, type TestService } from '../support/service.js';
import { png } from '../../support/media/fixtures.js';

const MiB = 1024 * 1024;

/**
 * runtime/storage/sqlite-checkpoints.ts: once a service has written 4 MiB of WAL, a thread of its
 * own checkpoints every 100 ms, and the service's connection no longer checkpoints before 10,000
 * pages. Seen from outside: a row committed after that is in the database file itself (not only
 * in the WAL) moments later. Without the thread it would stay in the WAL until 1,000 more pages.
 */
describe.skipIf(TEST_DB !== 'sqlite')('WAL checkpoints on SQLite run beside the service, not in its commits', () => {
  let t: TestService;
  let apiKey: string;
  beforeAll(async () => {
    // The database blob store: an upload's bytes are rows, so one upload writes megabytes of WAL.
    t = await startTestService({ blobStore: 'database' });
    ({ apiKey } = await t.account(UNLOCKED));
  });
  afterAll(async () => t?.close());

  it('copies what the service commits into the database file within moments, once the service has written 4 MiB', async () => {
    const file = t.config.dbUrl.slice('sqlite:'.length);
    const size = 6 * MiB;
    const ticket = await ticketFor(t, apiKey, { fileName: 'large.png', contentType: 'image/png', size });
    expectOk(ticket);
    // A picture followed by noise that does not compress: 6 MiB of rows.
    const picture = png(320, 240, false);
    const bytes = Buffer.concat([picture, randomBytes(size - picture.length)]);
    const put = await putBytes(ticket.body.data.uploadUrl, bytes, ticket.body.data.headers);
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(statSync(`${file}-wal`).size).toBeGreaterThanOrEqual(4 * MiB);

    // The thread starts within a second of the WAL passing 4 MiB; its first checkpoint copies this
    // row too, whether it was committed before the thread started or after.
    const marker = `checkpointed-${randomUUID()}`;
    expectOk(
      await createTask(t, apiKey, { model: 'vendor_a/family_a-2.5/text-to-video', input: { prompt: marker } }),
      202,
    );
    const until = Date.now() + 5000;
    while (!readFileSync(file).includes(marker) && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readFileSync(file).includes(marker)).toBe(true);
  });
});
