/**
 * docs/files-and-assets.md runs as pasted (test/support/pasted-shell.ts): its shell blocks,
 * unchanged and in order, in one bash in a fresh folder holding the checkout's `bin/`, on a
 * fresh database and a free port given through the environment the blocks read (PORT,
 * MEDIAFORGE_DB, MEDIAFORGE_DATA_DIR): a service, two pictures uploaded in three steps each, a
 * character made of them, a task's video read by ranges and validators. Page and service cannot drift.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from '../support/build.js';
import { pageBlocks, runPasted } from '../support/pasted-shell.js';

const dir = mkdtempSync(join(tmpdir(), 'mediaforge-files-page-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/files-and-assets.md', () => {
  it('runs as pasted: upload, commit, a character, ranges and validators on a media link', async () => {
    symlinkSync(join(ROOT, 'bin'), join(dir, 'bin'));
    const port = await freePort();
    const { code, stdout, stderr } = await runPasted(pageBlocks('docs/files-and-assets.md').join('\n'), {
      cwd: dir,
      env: { PORT: String(port), MEDIAFORGE_DB: `sqlite:${join(dir, 'mediaforge.db')}`, MEDIAFORGE_DATA_DIR: dir },
    });
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    const envelopes = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));
    // Each file's PUT and commit, the character made, listed by the CLI and by the API, deleted.
    const [putFront, front, putSide, side, entity, listed, served, deleted] = envelopes;
    for (const put of [putFront, putSide]) expect(put).toMatchObject({ code: 200 });
    for (const [asset, name] of [
      [front, 'fox-front.png'],
      [side, 'fox-side.png'],
    ])
      expect(asset).toMatchObject({ code: 200, data: { name, kind: 'image', format: 'png', width: 32, height: 32 } });
    expect(entity).toMatchObject({ name: 'Fox', assetIds: [front.data.assetId, side.data.assetId] });
    expect(listed.items).toEqual([expect.objectContaining({ entityId: entity.entityId, name: 'Fox' })]);
    expect(served).toMatchObject({ code: 200, data: { items: [expect.objectContaining({ name: 'Fox' })] } });
    expect(deleted).toEqual({ deleted: true });
    // The media link: HEAD, two ranges, 416, then 304 and 206 on the validators.
    expect(stdout).toMatch(/^HTTP\/1\.1 200 OK\r?$/m);
    expect(stdout).toMatch(/^accept-ranges: bytes\r?$/m);
    expect(stdout).toMatch(/^content-range: bytes 0-1023\/\d+\r?$/m);
    expect(stdout.match(/^HTTP\/1\.1 206 Partial Content\r?$/gm)).toHaveLength(2);
    const codes = stdout.split('\n').filter((line) => /^\d{3}$/.test(line));
    expect(codes).toEqual(['416', '304', '206']);
  }, 240_000);
});
