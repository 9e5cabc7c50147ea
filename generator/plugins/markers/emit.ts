import type { MarkerStyle } from '../../load/types.js';
import { allModelInputs, type Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';
import type { MarkerPatternCode } from '../../../catalogue-core/markers.js';
import type { MarkerStyleCode } from './template.js';

/** A spec pattern as the checker runs it: a global RegExp (case-insensitive where the style says). */
function patternCode(p: MarkerStyle['patterns'][number]): MarkerPatternCode {
  const code: MarkerPatternCode = { re: new RegExp(p.regex, `g${p.ignoreCase ? 'i' : ''}`) };
  if (p.kind) code.kind = p.kind;
  if (p.number === 'ordinal') code.ordinal = true;
  if (p.kindWords) code.kindWords = p.kindWords;
  return code;
}

/** The marker styles the models use, by name in name order. */
export function markerStyleCodes(styles: readonly MarkerStyle[]): Map<string, MarkerStyleCode> {
  const byName = new Map<string, MarkerStyle>();
  for (const style of styles) byName.set(style.name, style);
  return new Map(
    [...byName.keys()].sort().map((name) => {
      const s = byName.get(name)!;
      return [
        name,
        { description: s.description, example: s.example, order: s.order ?? [], patterns: s.patterns.map(patternCode) },
      ];
    }),
  );
}

/**
 * generated/markers.ts: a prompt-marker checker per marker style used by a model (code:
 * ./template.ts). A marker that names a reference the request does not carry gives a warning;
 * warnings never block a request.
 */
export const markersPlugin: Plugin = {
  name: 'markers',
  dependsOn: ['support'],
  emit: ({ catalogue }) => [
    {
      path: 'markers.ts',
      contents: printModule({
        template: new URL('./template.ts', import.meta.url),
        imports: { '../support/template.js': './support.js' },
        values: { markerStyles: markerStyleCodes(catalogue.models.map((m) => m.markers)) },
      }),
      inputs: ['spec/shared/markers.yaml', ...allModelInputs(catalogue)],
    },
  ],
};
