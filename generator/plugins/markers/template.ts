/*
 * generated/markers.ts: a prompt-marker checker per marker style a model uses
 * (spec/shared/markers.yaml). A marker that names a reference the request does not carry gives a
 * warning; warnings never block a request.
 */
import { checkMarkerPatterns, countItems, given, type MarkerPatternCode, type Warning } from '../support/template.js';

export interface MarkerStyleCode {
  description: string;
  example: string;
  order: readonly string[];
  patterns: readonly MarkerPatternCode[];
}

/** Every marker style a model uses, by name (spec/shared/markers.yaml). */
export const markerStyles: ReadonlyMap<string, MarkerStyleCode> = new Map();

/** Counts the references of each kind a request carries; kind `any` counts the kinds of the style's order (all when none). */
export function countReferences(
  input: Record<string, unknown>,
  fields: readonly (readonly [string, string])[],
  order: readonly string[],
): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [field, kind] of fields) {
    const value = input[field];
    counts[kind] = (counts[kind] ?? 0) + (Array.isArray(value) ? countItems(value) : given(value) ? 1 : 0);
  }
  counts.any = 0;
  for (const [kind, n] of Object.entries(counts))
    if (kind !== 'any' && (order.length === 0 || order.includes(kind))) counts.any += n;
  return counts;
}

/** Warnings for the prompt of a normalized input under a marker style. */
export function checkMarkers(
  style: string,
  input: Record<string, unknown>,
  fields: readonly (readonly [string, string])[],
): Warning[] {
  const code = markerStyles.get(style);
  if (!code) return [];
  return checkMarkerPatterns(input.prompt, code.patterns, countReferences(input, fields, code.order));
}
