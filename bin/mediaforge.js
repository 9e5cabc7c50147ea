#!/usr/bin/env node
// The mediaforge command. It runs the compiled CLI in dist/ (npm run build) when that build is
// current. In a development checkout whose build is missing or older than its sources it runs the
// TypeScript sources through tsx (a devDependency), so tests and `node bin/mediaforge.js` never
// wait for a build; a production install (npm prune --omit=dev) has no tsx and runs dist/.
import { buildState } from '../scripts/build-state.mjs';

const state = buildState();
let cli;
if (state === 'current') cli = await import('../dist/runtime/cli/main.js');
else {
  const tsx = await import('tsx/esm/api').catch(() => undefined);
  if (tsx) {
    tsx.register();
    cli = await import('../runtime/cli/main.ts');
  } else if (state === 'stale') {
    console.error(
      'mediaforge: dist/ is older than the sources and tsx (a devDependency) is not installed: running the existing build (npm ci && npm run build rebuilds it)',
    );
    cli = await import('../dist/runtime/cli/main.js');
  } else {
    console.error(
      'mediaforge: nothing to run: dist/ is not built and tsx (a devDependency) is not installed. Run: npm ci && npm run build',
    );
    process.exit(1);
  }
}
await cli.runCli(process.argv.slice(2));
