import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './build.js';

/**
 * The pages' shell blocks, run as a reader pastes them: unchanged, in one `bash -e`, with only
 * the environment a block reads (a port, a database) set by the suite. Every page of README.md and
 * docs/ with a ```sh block has a suite that runs them (test/docs/pasted-pages.test.ts holds the list).
 */

/** Every ```sh block of a Markdown text, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/** Every ```sh block of a page of the checkout (`docs/operating.md`), in order. */
export function pageBlocks(page: string): string[] {
  return shellBlocks(readFileSync(join(ROOT, page), 'utf8'));
}

export interface PastedRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `script` in `bash -e` in its own process group and waits for it to exit; whatever it left
 * running in the background (`serve ... &`) is then stopped with SIGTERM to the group.
 */
export async function runPasted(script: string, options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<PastedRun> {
  const child = spawn('bash', ['-e', '-c', script], {
    cwd: options.cwd,
    detached: true,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    /* the group is gone already */
  }
  return { code, stdout, stderr };
}
