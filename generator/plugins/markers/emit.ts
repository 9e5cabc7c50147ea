import type { MarkerStyle } from '../../load/types.js';
import { allModelInputs, type Plugin } from '../../plugin.js';

const lit = (value: unknown) => JSON.stringify(value);

function emitPattern(p: MarkerStyle['patterns'][number]): string {
  const flags = `g${p.ignoreCase ? 'i' : ''}`;
  const parts = [`re: new RegExp(${lit(p.regex)}, ${lit(flags)})`];
  if (p.kind) parts.push(`kind: ${lit(p.kind)}`);
  if (p.number === 'ordinal') parts.push('ordinal: true');
  if (p.kindWords) parts.push(`kindWords: ${lit(p.kindWords)}`);
  return `{ ${parts.join(', ')} }`;
}

/**
 * generated/markers.ts: a prompt-marker checker per marker style used by a model. A marker that
 * names a reference the request does not carry gives a warning; warnings never block a request.
 */
export const markersPlugin: Plugin = {
  name: 'markers',
  dependsOn: ['support'],
  emit: ({ catalogue }) => {
    const styles = new Map<string, MarkerStyle>();
    for (const model of [...catalogue.models]) styles.set(model.markers.name, model.markers);
    const names = [...styles.keys()].sort();
    return [
      {
        path: 'markers.ts',
        contents: [
          `import { checkMarkerPatterns, countItems, given, type MarkerPatternCode, type Warning } from './support.js';`,
          '',
          'export interface MarkerStyleCode { description: string; example: string; order: readonly string[]; patterns: readonly MarkerPatternCode[] }',
          '',
          '/** Every marker style a model uses, by name (spec/shared/markers.yaml). */',
          'export const markerStyles: ReadonlyMap<string, MarkerStyleCode> = new Map([',
          ...names.map((name) => {
            const s = styles.get(name)!;
            return `  [${lit(name)}, { description: ${lit(s.description)}, example: ${lit(s.example)}, order: ${lit(s.order ?? [])}, patterns: [${s.patterns.map(emitPattern).join(', ')}] }],`;
          }),
          ']);',
          '',
          '/** Counts the references of each kind a request carries; kind `any` counts the kinds of the style\'s order (all when none). */',
          'export function countReferences(input: Record<string, unknown>, fields: readonly (readonly [string, string])[], order: readonly string[]): Record<string, number> {',
          '  const counts: Record<string, number> = {};',
          '  for (const [field, kind] of fields) {',
          '    const value = input[field];',
          '    counts[kind] = (counts[kind] ?? 0) + (Array.isArray(value) ? countItems(value) : given(value) ? 1 : 0);',
          '  }',
          '  counts.any = 0;',
          '  for (const [kind, n] of Object.entries(counts)) if (kind !== \'any\' && (order.length === 0 || order.includes(kind))) counts.any += n;',
          '  return counts;',
          '}',
          '',
          '/** Warnings for the prompt of a normalized input under a marker style. */',
          'export function checkMarkers(style: string, input: Record<string, unknown>, fields: readonly (readonly [string, string])[]): Warning[] {',
          '  const code = markerStyles.get(style);',
          '  if (!code) return [];',
          '  return checkMarkerPatterns(input.prompt, code.patterns, countReferences(input, fields, code.order));',
          '}',
          '',
        ].join('\n'),
        inputs: ['spec/shared/markers.yaml', ...allModelInputs(catalogue)],
      },
    ];
  },
};
