/*
 * Model ids and family patterns of whole path segments (`vendor_a/*`, `vendor_b/family_c-3.0/*`):
 * one rule for a key's allow-list (runtime/accounts/key-policy.ts) and a price book's entries
 * (generator/plugins/price-books), so a pattern means the same wherever it is written.
 */

/**
 * Whether a model id matches an entry: an exact id, or a pattern whose `*` segments stand for
 * whole path segments (`acme/*` matches `acme/x/y`, never `acmeb/x`); a final `*` stands for one
 * or more segments, any other `*` for exactly one.
 */
export function modelMatches(entry: string, modelId: string): boolean {
  if (!entry.includes('*')) return entry === modelId;
  const want = entry.split('/');
  const have = modelId.split('/');
  for (let i = 0; i < want.length; i++) {
    const last = i === want.length - 1;
    if (want[i] === '*') {
      if (last) return have.length > i;
      if (i >= have.length) return false;
      continue;
    }
    if (want[i] !== have[i]) return false;
  }
  return have.length === want.length;
}

/**
 * How specific an entry is, larger first: an exact id beats every pattern; among patterns, the
 * one naming more segments (not `*`) wins. Two matching patterns of equal specificity are
 * ambiguous: the generator refuses such a book rather than pick one by the order of its lines.
 */
export function entrySpecificity(entry: string): number {
  if (!entry.includes('*')) return Number.MAX_SAFE_INTEGER;
  return entry.split('/').filter((segment) => segment !== '*').length;
}

/** The most specific of `entries` matching `modelId` (all of the best when tied), or [] when none matches. */
export function mostSpecificEntries(entries: readonly string[], modelId: string): string[] {
  let best: string[] = [];
  let bestScore = -1;
  for (const entry of entries) {
    if (!modelMatches(entry, modelId)) continue;
    const score = entrySpecificity(entry);
    if (score > bestScore) {
      best = [entry];
      bestScore = score;
    } else if (score === bestScore) best.push(entry);
  }
  return best;
}
