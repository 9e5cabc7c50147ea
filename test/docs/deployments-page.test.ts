/**
 * docs/deployments.md's shell blocks, run as a reader pastes them (as the README's first task is,
 * test/packaging/readme-first-task.test.ts): every ```sh block of the page, unchanged, in order,
 * in one `bash -e`, in a fresh folder that has the checkout's `bin/` (the blocks say "at the
 * repository root" and write ./up, ./edge and edge.yaml there), with free ports through the
 * variables the block reads (UP_PORT, EDGE_PORT). Two services start in the background, are
 * waited for, probed, and a task goes through the edge to the upstream. Page and test cannot drift.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from '../support/build.js';

const dir = mkdtempSync(join(tmpdir(), 'mediaforge-deployments-page-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every ```sh block of the page, in order. */
function shellBlocks(): string[] {
  const page = readFileSync(join(ROOT, 'docs/deployments.md'), 'utf8');
  return [...page.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

describe('docs/deployments.md', () => {
  it('its shell blocks run as pasted: upstream and edge started and waited for, probed, a task through both', async () => {
    const blocks = shellBlocks();
    expect(blocks.length).toBeGreaterThan(0);
    symlinkSync(join(ROOT, 'bin'), join(dir, 'bin'));
    const [upPort, edgePort] = [await freePort(), await freePort()];
    // Its own process group, so that the services it leaves in the background are stopped with it.
    const child = spawn('bash', ['-e', '-c', blocks.join('\n')], {
      cwd: dir,
      detached: true,
      env: {
        ...process.env,
        UP_PORT: String(upPort),
        EDGE_PORT: String(edgePort),
        MEDIAFORGE_SIMULATOR_LATENCY_MS: '500',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      expect(code, `${stdout}\n${stderr}`).toBe(0);
      const lines = stdout.split('\n').filter((line) => line.trim() !== '');
      expect(lines).toContain('edge.yaml: ok (3 upstreams, 2 models routed)');
      expect(lines).toContain('upstream upstream-jobs (jobs): ok (GET /api/v1/jobs: status 200)');
      expect(lines).toContain('upstream upstream-openai (openai-videos): ok (GET /v1/videos: status 200)');
      const answer = JSON.parse(lines.find((line) => line.startsWith('{')) ?? '{}');
      expect(answer.code).toBe(200);
      expect(answer.data.state).toBe('succeeded');
      expect(answer.data.output.assets[0].url).toContain(`127.0.0.1:${edgePort}`);
      expect(lines).toContain('upstream-jobs (jobs) ok in flight 0/8 submits 1 failures 0');
      expect(lines).toContain('upstream-openai (openai-videos) ok in flight 0 submits 0 failures 0');
      expect(lines).toContain('local (simulator) ok in flight 0 submits 0 failures 0');
      const edgeLog = readFileSync(join(dir, 'edge.log'), 'utf8');
      expect(edgeLog).toContain(`mediaforge listening on http://127.0.0.1:${edgePort}`);
      expect(edgeLog).toMatch(/upstream upstream-jobs \(jobs\): ok/);
      expect(`${stderr}${edgeLog}${readFileSync(join(dir, 'up.log'), 'utf8')}`).not.toMatch(
        /already exists|no such table|SyntaxError/,
      );
    } finally {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  }, 240_000);
});
