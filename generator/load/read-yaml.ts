import { readFileSync } from 'node:fs';
import { isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { SpecProblem } from './spec-error.js';

/** A parsed YAML file that can say where any path inside it was written. */
export interface YamlSource {
  /** Path relative to the project root, used in messages and headers. */
  file: string;
  data: unknown;
  locate(path: readonly (string | number)[]): { line: number; col: number };
  problem(path: readonly (string | number)[], message: string): SpecProblem;
}

export function parseYaml(file: string, text: string): { source?: YamlSource; problems: SpecProblem[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const problems: SpecProblem[] = [...doc.errors, ...doc.warnings].map((e) => {
    const pos = lineCounter.linePos(e.pos[0]);
    return { file, line: pos.line, col: pos.col, message: e.message.split('\n')[0] };
  });
  if (doc.errors.length > 0) return { problems };
  const locate = (path: readonly (string | number)[]) => {
    const offset = offsetOf(doc, path);
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, col: pos.col };
  };
  const source: YamlSource = {
    file,
    data: doc.toJS({ maxAliasCount: 100 }),
    locate,
    problem: (path, message) => ({ file, ...locate(path), message }),
  };
  return { source, problems };
}

export function readYaml(root: string, file: string): { source?: YamlSource; problems: SpecProblem[] } {
  return parseYaml(file, readFileSync(`${root}/${file}`, 'utf8'));
}

/** Offset of the deepest node along `path` that exists (the key for map entries, so messages point at the name). */
function offsetOf(doc: Document, path: readonly (string | number)[]): number {
  let node: unknown = doc.contents;
  let offset = (doc.contents as { range?: number[] } | null)?.range?.[0] ?? 0;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => String((item.key as { value?: unknown })?.value ?? item.key) === String(segment));
      if (!pair) break;
      offset = (pair.key as { range?: number[] })?.range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)] as { range?: number[] } | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return offset;
}
