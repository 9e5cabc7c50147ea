/**
 * Generator growth: generates the catalogue with N synthetic models (variations of the real ones:
 * each real model file copied under new ids, ranges and rates nudged) and reports the seconds for
 * load + every plugin, in process, nothing written. Usage: tsx bench/generate.ts [N ...]
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emitAll } from '../generator/generate.js';
import { loadCatalogue } from '../generator/load/catalogue.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function realModelFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.yaml')) out.push(path);
    }
  };
  walk(join(ROOT, 'spec/models'));
  return out.sort();
}

/** A spec/ copy holding `count` models: the real ones first, then renamed variations of them. */
export function syntheticSpec(count: number): string {
  const root = mkdtempSync(join(tmpdir(), 'mediaforge-bench-'));
  cpSync(join(ROOT, 'spec'), join(root, 'spec'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  const real = realModelFiles();
  for (let i = real.length; i < count; i++) {
    const source = real[i % real.length];
    const id = relative(join(ROOT, 'spec/models'), source).slice(0, -'.yaml'.length);
    const [vendor, family, mode] = id.split('/');
    const copyId = `${vendor}/${family}-syn${i}/${mode}`;
    let text = readFileSync(source, 'utf8').replace(`id: ${id}`, `id: ${copyId}`);
    // extends keep pointing at real models; rates are nudged so each copy prices differently.
    text = text.replace(/rate: "(\d+)(\.\d+)?"/g, (_m, whole: string, fraction = '') => `rate: "${Number(whole) + (i % 7)}${fraction}"`);
    const path = join(root, 'spec/models', `${copyId}.yaml`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  return root;
}

export async function timeGeneration(count: number): Promise<{ models: number; seconds: number; files: number }> {
  const root = syntheticSpec(count);
  try {
    const started = performance.now();
    const catalogue = loadCatalogue(root);
    const files = await emitAll(catalogue);
    return { models: catalogue.models.length, seconds: (performance.now() - started) / 1000, files: files.length };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const counts = process.argv.slice(2).map(Number);
  const results = [];
  for (const count of counts.length ? counts : [17, 170, 1000]) {
    const r = await timeGeneration(count);
    results.push(r);
    console.log(`${String(r.models).padStart(5)} models  ${r.seconds.toFixed(2).padStart(6)} s  ${(r.seconds * 1000 / r.models).toFixed(1).padStart(6)} ms/model  ${r.files} files`);
  }
  console.log(JSON.stringify(Object.fromEntries(results.map((r) => [`generate${r.models}Seconds`, Number(r.seconds.toFixed(3))]))));
}
