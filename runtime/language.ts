import { LANGUAGES, type Language } from '../generated/errors.js';

const BY_LOWER = new Map(LANGUAGES.map((l) => [l.toLowerCase(), l]));
/** Bare or script tags that name one of the supported variants. */
const ALIASES: Record<string, Language> = {
  zh: 'zh-CN',
  'zh-hans': 'zh-CN',
  'zh-sg': 'zh-CN',
  'zh-hant': 'zh-TW',
  'zh-hk': 'zh-TW',
  'zh-mo': 'zh-TW',
  pt: 'pt-BR',
};

/** One language tag to a supported language: exact, alias, or by its primary subtag (de-DE -> de). */
export function matchLanguage(tag: string): Language | undefined {
  const lower = tag.trim().toLowerCase();
  if (!lower || lower === '*') return undefined;
  const exact = BY_LOWER.get(lower) ?? ALIASES[lower];
  if (exact) return exact;
  const parts = lower.split('-');
  for (let n = parts.length - 1; n >= 1; n--) {
    const prefix = parts.slice(0, n).join('-');
    const found = BY_LOWER.get(prefix) ?? ALIASES[prefix];
    if (found) return found;
  }
  return undefined;
}

/** Accept-Language (by q-value) beats the account's setting; English otherwise. */
export function pickLanguage(header: string | undefined, accountLanguage: string | null | undefined): Language {
  if (header) {
    const ranked = header
      .split(',')
      .map((part, index) => {
        const [tag, ...params] = part.split(';');
        const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
        const quality = q ? Number(q.slice(2)) : 1;
        return { tag, quality: Number.isFinite(quality) ? quality : 0, index };
      })
      .filter((entry) => entry.quality > 0)
      .sort((a, b) => b.quality - a.quality || a.index - b.index);
    for (const entry of ranked) {
      const language = matchLanguage(entry.tag);
      if (language) return language;
    }
  }
  return (accountLanguage && matchLanguage(accountLanguage)) || 'en';
}
