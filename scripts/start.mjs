// npm start: builds dist/ when it is missing or older than its sources (npm run build), then runs
// the compiled `mediaforge serve --migrate` in this very process. package.json starts it with `exec`,
// so npm's own child is this node process: the SIGTERM or SIGINT npm forwards reaches the server
// and its worker, which stop, and nothing is left holding the port.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildState, ROOT } from './build-state.mjs';

const state = buildState();
if (state !== 'current') {
  const tsx = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  if (existsSync(tsx)) {
    console.log(
      state === 'missing'
        ? 'npm start: building dist/ (first run)'
        : 'npm start: sources changed since the last build: building dist/',
    );
    const built = spawnSync(process.execPath, [tsx, join(ROOT, 'scripts', 'build.ts'), '--server-only'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    if (built.status !== 0) process.exit(built.status ?? 1);
  } else if (state === 'missing') {
    console.error(
      'npm start: dist/ is not built and the build tools (devDependencies) are not installed. Run: npm ci && npm run build',
    );
    process.exit(1);
  } else
    console.error(
      'npm start: dist/ is older than the sources, and the build tools are not installed: serving the existing build',
    );
}
const { runCli } = await import('../dist/runtime/cli/main.js');
await runCli(['serve', '--migrate', ...process.argv.slice(2)]);
