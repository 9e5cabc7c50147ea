/**
 * docs/client.md's shell block runs as pasted (test/support/pasted-shell.ts), at the repository
 * root: `npm pack` in client/ (under the build lock, as every build of the suites), the tarball
 * installed into a new app made by `mktemp -d` (inside this test's own folder through TMPDIR; its
 * two dependencies come from the npm registry), and the package imported there.
 * test/packaging/client-package.test.ts tests the package itself; this keeps the page's commands true.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, withBuildLock } from '../support/build.js';
import { pageBlocks, runPasted } from '../support/pasted-shell.js';

const dir = mkdtempSync(join(tmpdir(), 'mediaforge-client-page-'));
const tarball = join(ROOT, 'client/mediaforge-client-0.1.0.tgz');
const hadTarball = existsSync(tarball);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (!hadTarball) rmSync(tarball, { force: true });
});

describe('docs/client.md', () => {
  it('runs as pasted: the package packed, installed into a new app, imported there', async () => {
    const blocks = pageBlocks('docs/client.md');
    expect(blocks).toHaveLength(1);
    const { code, stdout, stderr } = await withBuildLock(() =>
      runPasted(blocks[0], { cwd: ROOT, env: { TMPDIR: dir } }),
    );
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('mediaforge-client-0.1.0.tgz');
    expect(stdout.trim().split('\n').at(-1)).toBe('function');
  }, 240_000);
});
