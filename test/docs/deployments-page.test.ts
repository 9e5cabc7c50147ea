/**
 * docs/deployments.md's shell blocks, run as a reader pastes them (as the README's first task is,
 * test/packaging/readme-first-task.test.ts): every ```sh block of the page, unchanged, in order,
 * in one `bash -e`, in a fresh folder that has the checkout's `bin/` (the blocks say "at the
 * repository root" and write ./up, ./edge and edge.yaml there), with free ports through the
 * variables the block reads (UP_PORT, EDGE_PORT). Two services start in the background, are
 * waited for, probed, and a task goes through the edge to the upstream. Page and test cannot drift.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from '../support/build.js';
import { pageBlocks, runPasted } from '../support/pasted-shell.js';

const dir = mkdtempSync(join(tmpdir(), 'mediaforge-deployments-page-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/deployments.md', () => {
  it('its shell blocks run as pasted: upstream and edge started and waited for, probed, a task through both', async () => {
    const blocks = pageBlocks('docs/deployments.md');
    expect(blocks.length).toBeGreaterThan(0);
    symlinkSync(join(ROOT, 'bin'), join(dir, 'bin'));
    const [upPort, edgePort] = [await freePort(), await freePort()];
    const { code, stdout, stderr } = await runPasted(blocks.join('\n'), {
      cwd: dir,
      env: { UP_PORT: String(upPort), EDGE_PORT: String(edgePort), MEDIAFORGE_SIMULATOR_LATENCY_MS: '500' },
    });
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    const lines = stdout.split('\n').filter((line) => line.trim() !== '');
    expect(lines).toContain('edge.yaml: ok (3 upstreams, 2 models routed)');
    expect(lines).toContain('upstream upstream-jobs (jobs): ok (GET /api/v1/jobs: status 200)');
    expect(lines).toContain('upstream upstream-openai (openai-videos): ok (GET /v1/videos: status 200)');
    const answer = JSON.parse(lines.find((line) => line.startsWith('{')) ?? '{}');
    expect(answer.code).toBe(200);
    expect(answer.data.state).toBe('succeeded');
    expect(answer.data.output.assets[0].url).toContain(`127.0.0.1:${edgePort}`);
    expect(lines).toContain(`database ${join(dir, 'edge/db.sqlite')}`);
    expect(lines).toContain('upstream-jobs (jobs) ok in flight 0/8 submits 1 failures 0');
    // No task went to these two: the openai one was probed at start (its answer is on record), the simulator has nothing.
    expect(lines).toContain('upstream-openai (openai-videos) ok in flight 0 submits 0 failures 0');
    expect(lines).toContain('local (simulator) no record in flight 0 submits 0 failures 0');
    const edgeLog = readFileSync(join(dir, 'edge.log'), 'utf8');
    expect(edgeLog).toContain(`mediaforge listening on http://127.0.0.1:${edgePort}`);
    expect(edgeLog).toMatch(/upstream upstream-jobs \(jobs\): ok/);
    expect(`${stderr}${edgeLog}${readFileSync(join(dir, 'up.log'), 'utf8')}`).not.toMatch(
      /already exists|no such table|SyntaxError/,
    );
  }, 240_000);
});
