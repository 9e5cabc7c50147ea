import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, expectOk } from '../http/helpers.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { UNLOCKED } from './support.js';

const REQUEST = { model: 'vendor_a/family_a-2.5/text-to-video', input: { prompt: 'A lighthouse at dusk' } };

/** The blob key of a task's first output, from its signed media link. */
function outputKey(done: { output: { assets: { url: string }[] } }): string {
  return decodeURIComponent(new URL(done.output.assets[0].url).pathname.split('/').pop()!);
}

async function bytesAt(url: string): Promise<{ status: number; bytes: Buffer }> {
  const answer = await fetch(url);
  return { status: answer.status, bytes: Buffer.from(await answer.arrayBuffer()) };
}

describe("the simulator's clips on the local store: one copy for every task of the same shape", () => {
  let t: TestService;
  let apiKey: string;
  let root: string;
  beforeAll(async () => {
    t = await startTestService({ blobStore: 'local' });
    ({ apiKey } = await t.account(UNLOCKED));
    root = join(t.config.dataDir, 'blobs');
  });
  afterAll(async () => t?.close());

  const shared = () => (existsSync(join(root, '.shared')) ? readdirSync(join(root, '.shared')) : []);
  const run = async () => {
    const created = await createTask(t, apiKey, REQUEST);
    expectOk(created, 202);
    const done = await waitForTerminal(t, apiKey, created.body.data.taskId);
    expect(done.state).toBe('succeeded');
    return done;
  };
  const purge = async (taskId: string) =>
    expectOk(await t.call('POST', '/api/v1/jobs/purge', { key: apiKey, body: { taskId } }));

  it('stores each task its own object naming one file; a purge unlinks its own; the sweep takes the file once no task names it', async () => {
    const [first, second] = [await run(), await run()];
    const [firstKey, secondKey] = [outputKey(first), outputKey(second)];
    expect(firstKey).not.toBe(secondKey);

    // Two objects, one file: the same inode, named by both tasks and by the one copy under .shared/.
    const [a, b] = [statSync(join(root, firstKey)), statSync(join(root, secondKey))];
    expect(a.ino).toBe(b.ino);
    expect(a.nlink).toBe(3);
    const served = await bytesAt(first.output.assets[0].url);
    expect(served.status).toBe(200);
    expect((await bytesAt(second.output.assets[0].url)).bytes.equals(served.bytes)).toBe(true);
    expect(shared()).toEqual([createHash('sha256').update(served.bytes).digest('hex')]);
    // The copy is no object: `mediaforge blobs copy` lists the tasks' objects only.
    const listed: string[] = [];
    for await (const object of t.service.ctx.blobs.list()) listed.push(object.key);
    expect(listed).toEqual(expect.arrayContaining([firstKey, secondKey]));
    expect(listed.filter((key) => key.startsWith('.shared'))).toEqual([]);

    // Purging the first task deletes its object only: the second's is whole and served.
    await purge(first.taskId);
    expect((await fetch(first.output.assets[0].url)).status).toBe(404);
    expect(existsSync(join(root, firstKey))).toBe(false);
    const still = await bytesAt(second.output.assets[0].url);
    expect(still.status).toBe(200);
    expect(still.bytes.equals(served.bytes)).toBe(true);
    expect(statSync(join(root, secondKey)).nlink).toBe(2);
    // The sweep keeps a copy a task still names...
    await t.service.ctx.blobs.sweepAbandoned(0);
    expect(shared()).toHaveLength(1);

    // ...and takes it once none does; the next task of that shape writes it again.
    await purge(second.taskId);
    await t.service.ctx.blobs.sweepAbandoned(0);
    expect(shared()).toEqual([]);
    const third = await run();
    expect((await bytesAt(third.output.assets[0].url)).bytes.equals(served.bytes)).toBe(true);
    expect(statSync(join(root, outputKey(third))).nlink).toBe(2);
    expect(readFileSync(join(root, '.shared', shared()[0])).equals(served.bytes)).toBe(true);
  });

  it('replaces an object the key already names, as a put does, and refuses a content id that is no SHA-256', async () => {
    const store = t.service.ctx.blobs;
    const bytes = Buffer.from('the same bytes for every task');
    const contentId = createHash('sha256').update(bytes).digest('hex');
    await store.put('outputs/replaced/0.mp4', Buffer.from('an earlier object'));
    expect(await store.putShared!('outputs/replaced/0.mp4', contentId, bytes)).toBe(bytes.length);
    expect(readFileSync(join(root, 'outputs/replaced/0.mp4')).equals(bytes)).toBe(true);
    expect(statSync(join(root, 'outputs/replaced/0.mp4')).ino).toBe(statSync(join(root, '.shared', contentId)).ino);
    expect(readdirSync(join(root, '.partial'))).toEqual([]);
    await expect(store.putShared!('outputs/replaced/1.mp4', '../escape', bytes)).rejects.toThrow(/SHA-256/);
    expect(existsSync(join(root, 'outputs/replaced/1.mp4'))).toBe(false);
  });
});
