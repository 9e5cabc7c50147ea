/**
 * Generator growth: generates the catalogue with exactly N callable models (a subset of the real
 * ones when N is smaller than the catalogue; else every real one plus variations of them: each
 * callable model file copied under a new id, rates nudged) and reports the seconds for load + every
 * plugin, in process, nothing written. Usage: tsx bench/generate.ts [N ...]
 */
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isNode, isScalar, parseDocument } from 'yaml';
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

interface ModelFile {
  path: string;
  id: string;
  extendsId?: string;
  abstract: boolean;
}

function readModelFile(path: string): ModelFile {
  const text = readFileSync(path, 'utf8');
  const id = relative(join(ROOT, 'spec/models'), path).slice(0, -'.yaml'.length);
  return { path, id, extendsId: /^extends:\s*(\S+)/m.exec(text)?.[1], abstract: /^abstract:\s*true\b/m.test(text) };
}

/**
 * A spec/ copy holding exactly `count` callable models. Fewer than the real catalogue: the first
 * `count` callable models (reference-to-video ones first, then path order) and the models they
 * extend, the other files left out.
 * More: every real model, then renamed variations of the callable ones (abstract bases, which
 * generate nothing, are not copied; a copy keeps extending the real model its original extends).
 */
export function syntheticSpec(count: number): string {
  const root = mkdtempSync(join(tmpdir(), 'mediaforge-bench-'));
  cpSync(join(ROOT, 'spec'), join(root, 'spec'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  const real = realModelFiles().map(readModelFile);
  // reference-to-video first: the first 17 are the catalogue the service started with.
  const firstMode = (m: ModelFile) => (m.id.endsWith('/reference-to-video') ? 0 : 1);
  const callable = real
    .filter((m) => !m.abstract)
    .sort((a, b) => firstMode(a) - firstMode(b) || (a.id < b.id ? -1 : 1));
  if (count < callable.length) {
    // Callable models in path order, each with the chain it extends, as long as the total stays `count`.
    const byId = new Map(real.map((m) => [m.id, m]));
    const keep = new Set<string>();
    let kept = 0;
    for (const model of callable) {
      if (kept === count) break;
      if (keep.has(model.id)) continue;
      const chain: string[] = [];
      for (
        let at: ModelFile | undefined = model;
        at && !keep.has(at.id) && !chain.includes(at.id);
        at = at.extendsId ? byId.get(at.extendsId) : undefined
      )
        chain.push(at.id);
      const adds = chain.filter((id) => !byId.get(id)!.abstract).length;
      if (kept + adds > count) continue;
      for (const id of chain) keep.add(id);
      kept += adds;
    }
    if (kept !== count) throw new Error(`cannot pick exactly ${count} models from the real catalogue (got ${kept})`);
    for (const model of real) if (!keep.has(model.id)) rmSync(join(root, 'spec/models', `${model.id}.yaml`));
    dropProviderEntries(root, keep);
    return root;
  }
  const copies = new Map<string, string>();
  for (let i = callable.length; i < count; i++) {
    const source = callable[i % callable.length];
    const [vendor, family, mode] = source.id.split('/');
    const copyId = `${vendor}/${family}-syn${i}/${mode}`;
    copies.set(copyId, source.id);
    let text = readFileSync(source.path, 'utf8').replace(`id: ${source.id}`, `id: ${copyId}`);
    // extends keep pointing at real models; rates are nudged so each copy prices differently.
    text = text.replace(
      /rate: "(\d+)(\.\d+)?"/g,
      (_m, whole: string, fraction = '') => `rate: "${Number(whole) + (i % 7)}${fraction}"`,
    );
    const path = join(root, 'spec/models', `${copyId}.yaml`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  copyProviderEntries(root, copies);
  return root;
}

/**
 * A copy is the same model to a protocol: its original's per-model entry (`serves: none`, a
 * model name) goes with it, or the generator would refuse a protocol that cannot run the copy.
 */
function copyProviderEntries(root: string, copies: Map<string, string>): void {
  const dir = join(root, 'spec/providers');
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.yaml'))) {
    const doc = parseDocument(readFileSync(join(dir, name), 'utf8'));
    const models = doc.get('models');
    if (!isMap(models)) continue;
    for (const [copyId, sourceId] of copies) {
      const entry = models.get(sourceId, true);
      if (isNode(entry)) models.set(copyId, entry.clone());
    }
    writeFileSync(join(dir, name), doc.toString());
  }
}

/** A protocol's per-model entries (spec/providers/<protocol>.yaml `models:`) name real models: those left out go too. */
function dropProviderEntries(root: string, keep: Set<string>): void {
  const dir = join(root, 'spec/providers');
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.yaml'))) {
    const doc = parseDocument(readFileSync(join(dir, name), 'utf8'));
    const models = doc.get('models');
    if (!isMap(models)) continue;
    for (const pair of [...models.items])
      if (isScalar(pair.key) && !keep.has(String(pair.key.value))) models.delete(pair.key);
    writeFileSync(join(dir, name), doc.toString());
  }
}

export async function timeGeneration(count: number): Promise<{ models: number; seconds: number; files: number }> {
  const root = syntheticSpec(count);
  try {
    const started = performance.now();
    const catalogue = loadCatalogue(root);
    const files = await emitAll(catalogue);
    if (catalogue.models.length !== count)
      throw new Error(`asked for ${count} models, generated ${catalogue.models.length}`);
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
    console.log(
      `${String(r.models).padStart(5)} models  ${r.seconds.toFixed(2).padStart(6)} s  ${((r.seconds * 1000) / r.models).toFixed(1).padStart(6)} ms/model  ${r.files} files`,
    );
  }
  console.log(
    JSON.stringify(
      Object.fromEntries(results.map((r) => [`generate${r.models}Seconds`, Number(r.seconds.toFixed(3))])),
    ),
  );
}
