/**
 * The build, for the suites that test what it produces (test/packaging/). One build at a time
 * across test processes: `npm run build` and `npm pack` of the client both rewrite dist/ folders, so
 * they run under one lock (a directory made atomically); a build already current is not redone.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { buildState } from '../../scripts/build-state.mjs';

export const ROOT = resolve(import.meta.dirname, '../..');
const LOCK = join(tmpdir(), `mediaforge-build-lock-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`);
const run = promisify(execFile);

/** Runs `fn` holding the build lock (waits up to 10 minutes; a lock older than that is taken over). */
export async function withBuildLock<T>(fn: () => Promise<T>): Promise<T> {
  const until = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      const age = Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 10 * 60_000) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > until) throw new Error(`build lock ${LOCK} still held after 10 minutes`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** `npm run build` unless dist/ is current. */
export async function ensureBuilt(): Promise<void> {
  await withBuildLock(async () => {
    if (buildState() === 'current') return;
    await run(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, 'scripts/build.ts')], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
  });
}

/** A free TCP port on 127.0.0.1 (bound and released). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}
