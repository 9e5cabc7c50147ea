/**
 * Issue 37, point 3 (ISSUE-NOTES): a real `mediaforge serve` whose own links name a loopback address
 * (MEDIAFORGE_PUBLIC_URL unset, or set to 127.0.0.1) and whose deployments file routes to an upstream
 * on another host refuses to start with one clear line: that upstream would be sent links (the
 * references and source clips of runtime/worker/portable-input.ts) it cannot reach. A public URL the
 * upstream can reach, or an upstream on this host, starts it. Nothing is contacted: the remote
 * upstream's name ends in .invalid and the refusal comes before any probe.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveUntilListening } from '../support/cli-process.js';

const fileWith = (dir: string, name: string, baseUrl: string): string => {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      'upstreams:',
      `  up: { kind: jobs, baseUrl: "${baseUrl}", secretEnv: UP_KEY }`,
      'models:',
      '  vendor_d/family_d/reference-to-video:',
      '    - upstream: up',
    ].join('\n'),
  );
  return path;
};

describe('serve refuses loopback links for a remote upstream (issue 37, point 3)', () => {
  let dir: string;
  let remote: string;
  let local: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mediaforge-serve-links-'));
    remote = fileWith(dir, 'remote.yaml', 'https://upstream.example.invalid/api/v1');
    local = fileWith(dir, 'local.yaml', 'http://127.0.0.1:9/api/v1');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['MEDIAFORGE_PUBLIC_URL unset (links name the listen address)', {}],
    ['MEDIAFORGE_PUBLIC_URL on 127.0.0.1', { MEDIAFORGE_PUBLIC_URL: 'http://127.0.0.1:8080' }],
    ['MEDIAFORGE_PUBLIC_URL on localhost', { MEDIAFORGE_PUBLIC_URL: 'http://localhost:8080' }],
  ])(
    '%s, a remote upstream: exits 1 before listening, naming the upstream and the setting',
    async (_n, env) => {
      const run = await serveUntilListening(dir, { UP_KEY: 'up-key', MEDIAFORGE_DEPLOYMENTS: remote, ...env });
      expect(run.code).toBe(1);
      expect(run.stdout).not.toContain('mediaforge listening on');
      expect(run.stderr).toMatch(
        /upstream up \(upstream\.example\.invalid\) is not on this host.*set MEDIAFORGE_PUBLIC_URL/,
      );
    },
    60_000,
  );

  it.each([
    [
      'a public MEDIAFORGE_PUBLIC_URL, a remote upstream',
      { MEDIAFORGE_PUBLIC_URL: 'https://edge.example.invalid' },
      'remote',
    ],
    ['MEDIAFORGE_PUBLIC_URL unset, an upstream on this host', {}, 'local'],
  ])(
    '%s: starts',
    async (_n, env, which) => {
      const run = await serveUntilListening(dir, {
        UP_KEY: 'up-key',
        MEDIAFORGE_DEPLOYMENTS: which === 'remote' ? remote : local,
        ...env,
      });
      // Stopped by the test once it listens (SIGTERM may land before its handler: the exit code says nothing here).
      expect(run.stdout).toContain('mediaforge listening on');
      expect(run.stderr).not.toContain('is not on this host');
    },
    60_000,
  );
});
