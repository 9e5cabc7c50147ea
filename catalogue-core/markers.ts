/*
 * Prompt markers (@Image1, character1, <<<image_1>>>, Picture 1, ...): a warning for each marker
 * that names a reference the request does not carry. The styles are data (generated/markers.ts).
 */
import type { Warning } from './issues.js';

export interface MarkerPatternCode {
  re: RegExp;
  kind?: string;
  ordinal?: boolean;
  kindWords?: Record<string, string>;
}

const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
};

/**
 * Warnings for markers that name a reference that was not supplied. `counts` holds how many
 * references of each kind the request carries; kind `any` counts them all.
 */
export function checkMarkerPatterns(
  prompt: unknown,
  patterns: readonly MarkerPatternCode[],
  counts: Record<string, number>,
): Warning[] {
  if (typeof prompt !== 'string') return [];
  const out: Warning[] = [];
  const seen = new Set<string>();
  for (const pattern of patterns) {
    pattern.re.lastIndex = 0;
    for (const match of prompt.matchAll(pattern.re)) {
      const marker = match[0];
      if (seen.has(marker)) continue;
      seen.add(marker);
      const number = pattern.ordinal ? ORDINALS[match[1].toLowerCase()] : Number(match[1]);
      const kind = pattern.kind ?? pattern.kindWords?.[match[2].toLowerCase()] ?? 'any';
      const count = counts[kind] ?? 0;
      if (number <= count) continue;
      const label = kind === 'any' ? 'reference' : kind;
      out.push(
        count === 0
          ? {
              code: 'marker_kind_missing',
              path: 'input.prompt',
              message: { key: 'marker_kind_missing', params: { marker, kind: label } },
            }
          : {
              code: 'marker_unmatched',
              path: 'input.prompt',
              message: { key: 'marker_unmatched', params: { marker, count, kind: label } },
            },
      );
    }
  }
  return out;
}
