import { loadCatalogue } from './load/catalogue.js';
import type { Catalogue } from './load/types.js';
import type { GeneratedFile, Plugin } from './plugin.js';
import { plugins as defaultPlugins } from './plugins/index.js';
import { writeAll, type WriteResult } from './write.js';

/** Runs the plugins in dependency order and returns every file they emit. */
export async function emitAll(catalogue: Catalogue, plugins: Plugin[] = defaultPlugins): Promise<GeneratedFile[]> {
  const emitted = new Map<string, GeneratedFile>();
  const done = new Set<string>();
  const pending = [...plugins];
  while (pending.length) {
    const index = pending.findIndex((p) => (p.dependsOn ?? []).every((d) => done.has(d)));
    if (index < 0) throw new Error(`plugin dependencies cannot be met: ${pending.map((p) => p.name).join(', ')}`);
    const [plugin] = pending.splice(index, 1);
    for (const file of await plugin.emit({ catalogue, emitted })) {
      if (emitted.has(file.path)) throw new Error(`plugins ${plugin.name} and another both emit ${file.path}`);
      emitted.set(file.path, file);
    }
    done.add(plugin.name);
  }
  return [...emitted.values()];
}

/** Reads spec/ under root and writes (or, with check, compares) root/generated and the trees of write.ts OUTPUT_TREES. */
export async function generate(root: string, options: { check?: boolean; outDir?: string } = {}): Promise<WriteResult> {
  const catalogue = loadCatalogue(root);
  const files = await emitAll(catalogue);
  return writeAll(root, files, options.check ?? false, options.outDir);
}
