/**
 * The playground's and the console's scripts and styles (web/playground.ts, web/console.ts, with
 * uPlot and its CSS), served from /console/assets/. `npm run build` bundles them with esbuild into
 * `assets/` beside the compiled module (dist/runtime/console/assets/), which a production install
 * reads; a development checkout without that build bundles them in memory once at start (about
 * 100 ms; esbuild is a devDependency, imported only then). No CDN either way.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConsoleAsset {
  type: string;
  text: string;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const PREBUILT = join(HERE, 'assets');

function typeOf(name: string): string {
  return name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
}

/** Bundles the page scripts from their sources (web/ beside this module). */
export async function bundleConsoleAssets(): Promise<Map<string, ConsoleAsset>> {
  const esbuild = await import('esbuild');
  const web = join(HERE, 'web');
  const result = await esbuild.build({
    entryPoints: { playground: join(web, 'playground.ts'), console: join(web, 'console.ts') },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    write: false,
    outdir: '/assets',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const assets = new Map<string, ConsoleAsset>();
  for (const file of result.outputFiles) {
    const name = file.path.slice(file.path.lastIndexOf('/') + 1);
    assets.set(name, { type: typeOf(name), text: file.text });
  }
  return assets;
}

/** Writes bundled assets to `dir` (the build's assets/ beside the compiled module). */
export function writeConsoleAssets(assets: Map<string, ConsoleAsset>, dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, asset] of assets) writeFileSync(join(dir, name), asset.text);
}

/** The pre-bundled assets when the build wrote them, else a bundle made now. */
export async function loadConsoleAssets(): Promise<Map<string, ConsoleAsset>> {
  if (!existsSync(PREBUILT)) return bundleConsoleAssets();
  const assets = new Map<string, ConsoleAsset>();
  for (const name of readdirSync(PREBUILT))
    assets.set(name, { type: typeOf(name), text: readFileSync(join(PREBUILT, name), 'utf8') });
  return assets;
}
