import { LANGUAGES } from '../../load/catalogue.js';
import { readYaml, type YamlSource } from '../../load/read-yaml.js';
import { SpecError, type SpecProblem } from '../../load/spec-error.js';
import type { Plugin } from '../../plugin.js';
import { stringUnion } from '../../print/literal.js';
import { printModule } from '../../print/module.js';

const FILE = 'spec/ui-text.yaml';
const KEY = /^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)+$/;

export interface UiTextSpec {
  /** Key -> language -> text; every key has all 12 languages. */
  texts: Record<string, Record<string, string>>;
  /** Each language's own name for itself (the language picker shows these in every interface language). */
  languageNames: Record<string, string>;
}

const placeholders = (text: string) =>
  [...text.matchAll(/\{(\w+)\}/g)]
    .map((m) => m[1])
    .sort()
    .join(',');

function checkEntry(source: YamlSource, key: string, entry: unknown, problems: SpecProblem[]): Record<string, string> {
  const at = ['texts', key];
  if (!KEY.test(key)) problems.push(source.problem(at, `key "${key}" must be dotted camelCase words (area.name)`));
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    problems.push(source.problem(at, `"${key}" must map each language to its text`));
    return {};
  }
  const table = entry as Record<string, unknown>;
  for (const lang of Object.keys(table))
    if (!LANGUAGES.includes(lang))
      problems.push(source.problem([...at, lang], `unknown language ${lang} (${LANGUAGES.join(', ')})`));
  const english = typeof table.en === 'string' ? table.en : '';
  for (const lang of LANGUAGES) {
    const text = table[lang];
    if (typeof text !== 'string' || text.trim() === '')
      problems.push(source.problem(at, `"${key}" is missing its ${lang} text`));
    else if (placeholders(text) !== placeholders(english))
      problems.push(
        source.problem(
          [...at, lang],
          `placeholders of "${key}" in ${lang} differ from the English text ({${placeholders(english)}})`,
        ),
      );
  }
  return Object.fromEntries(LANGUAGES.map((lang) => [lang, String(table[lang] ?? '')]));
}

/** Reads and checks spec/ui-text.yaml under `root`; every problem is reported as file:line:col. */
export function loadUiText(root: string): UiTextSpec {
  const { source, problems } = readYaml(root, FILE);
  if (!source) throw new SpecError(problems);
  const found: SpecProblem[] = [];
  const data = (source.data ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(data))
    if (key !== 'texts' && key !== 'languageNames')
      found.push(source.problem([key], `unknown section "${key}" (texts, languageNames)`));
  const rawTexts = data.texts;
  if (typeof rawTexts !== 'object' || rawTexts === null || Object.keys(rawTexts).length === 0)
    throw new SpecError([source.problem(['texts'], 'texts must be a non-empty map of key to languages')]);
  const texts: Record<string, Record<string, string>> = {};
  for (const [key, entry] of Object.entries(rawTexts)) texts[key] = checkEntry(source, key, entry, found);
  const rawNames = (data.languageNames ?? {}) as Record<string, unknown>;
  for (const lang of LANGUAGES)
    if (typeof rawNames[lang] !== 'string' || !rawNames[lang])
      found.push(source.problem(['languageNames'], `languageNames is missing ${lang}`));
  for (const lang of Object.keys(rawNames))
    if (!LANGUAGES.includes(lang)) found.push(source.problem(['languageNames', lang], `unknown language ${lang}`));
  if (found.length) throw new SpecError(found);
  const sortedKeys = Object.keys(texts).sort();
  return {
    texts: Object.fromEntries(sortedKeys.map((key) => [key, texts[key]])),
    languageNames: Object.fromEntries(LANGUAGES.map((lang) => [lang, String(rawNames[lang])])),
  };
}

/**
 * generated/ui-text.ts: the texts of the playground and console pages in the 12 languages, one
 * object per language (the server hands a page only its own language), and the key type the page
 * code is checked against (code: ./template.ts).
 */
export const uiTextPlugin: Plugin = {
  name: 'ui-text',
  dependsOn: ['errors'],
  emit: ({ catalogue }) => {
    const spec = loadUiText(catalogue.root);
    const keys = Object.keys(spec.texts);
    const byLanguage = Object.fromEntries(
      LANGUAGES.map((lang) => [lang, Object.fromEntries(keys.map((key) => [key, spec.texts[key][lang]]))]),
    );
    return [
      {
        path: 'ui-text.ts',
        inputs: [FILE],
        contents: printModule({
          template: new URL('./template.ts', import.meta.url),
          imports: { '../errors/template.js': './errors.js' },
          types: { UiTextKey: stringUnion(keys) },
          values: { LANGUAGE_NAMES: spec.languageNames, UI_TEXT: byLanguage },
        }),
      },
    ];
  },
};
