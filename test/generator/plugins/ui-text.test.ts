import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LANGUAGES } from '../../../generated/errors.js';
import { LANGUAGE_NAMES, UI_TEXT } from '../../../generated/ui-text.js';
import type { Catalogue } from '../../../generator/load/types.js';
import { plugins } from '../../../generator/plugins/index.js';
import { loadUiText, uiTextPlugin } from '../../../generator/plugins/ui-text/emit.js';
import { ROOT } from '../../support/root.js';
import { copySpec } from '../../support/spec-copy.js';

const FILE = 'spec/ui-text.yaml';

/** The 1-based line of the first line equal to `text` at or after line `from`. */
function lineOf(lines: string[], text: string, from = 0): number {
  const index = lines.findIndex((line, i) => i >= from && line === text);
  if (index < 0) throw new Error(`no line ${text}`);
  return index + 1;
}

describe('page texts (spec/ui-text.yaml -> generated/ui-text.ts)', () => {
  it('the generated texts are the spec file, one complete table per language', () => {
    const spec = loadUiText(ROOT);
    expect(Object.keys(UI_TEXT)).toEqual([...LANGUAGES]);
    for (const language of LANGUAGES) {
      expect(Object.keys(UI_TEXT[language])).toEqual(Object.keys(spec.texts));
      for (const [key, text] of Object.entries(UI_TEXT[language]))
        expect(text, `${language} ${key}`).toBe(spec.texts[key][language]);
    }
    expect(Object.keys(LANGUAGE_NAMES)).toEqual([...LANGUAGES]);
  });

  it('translations are real: in every language at most 1 text in 20 is the English one (names such as API, URL)', () => {
    for (const language of LANGUAGES.filter((l) => l !== 'en')) {
      const same = Object.entries(UI_TEXT[language]).filter(
        ([key, text]) => text === UI_TEXT.en[key as keyof typeof UI_TEXT.en],
      );
      expect(same.length, `${language}: ${same.map(([key]) => key).join(', ')}`).toBeLessThanOrEqual(
        Object.keys(UI_TEXT.en).length / 20,
      );
    }
  });

  it('every text is used by the pages or the console server (no dead keys)', () => {
    const dir = join(ROOT, 'runtime/console');
    const sources = [...readdirSync(dir), ...readdirSync(join(dir, 'web')).map((f) => `web/${f}`)]
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    const unused = Object.keys(UI_TEXT.en).filter((key) => !sources.includes(`'${key}'`));
    expect(unused).toEqual([]);
  });

  it('a missing language, different placeholders, an unknown language and a bad key are reported as file:line:col', () => {
    const copy = copySpec();
    try {
      const path = join(copy.root, FILE);
      const lines = readFileSync(path, 'utf8').split('\n');
      // auth.signUp loses its Polish text; playground.quote gets a German placeholder of its own.
      const signUp = lineOf(lines, '  auth.signUp:');
      lines.splice(
        lineOf(lines, '    pl: "Utwórz konto ({credits} darmowych kredytów do piaskownicy)"', signUp) - 1,
        1,
      );
      const quote = lineOf(lines, '  playground.quote:');
      const german = lineOf(lines, '    de: "Angebot: {credits} Credits (bis zu {max} reserviert)"', quote);
      lines[german - 1] = '    de: "Angebot: {credits} Credits (bis zu {maximum} reserviert)"';
      const result = lineOf(lines, '  playground.result:');
      lines.splice(result, 0, '    nl: "Resultaat"');
      lines.push('  Bad_Key:', ...LANGUAGES.map((l) => `    ${l}: "x"`));
      writeFileSync(path, lines.join('\n'));
      const badKey = lineOf(lines, '  Bad_Key:');
      expect(() => loadUiText(copy.root)).toThrowError(
        [
          `${FILE}:${signUp}:3: "auth.signUp" is missing its pl text`,
          `${FILE}:${german}:5: placeholders of "playground.quote" in de differ from the English text ({credits,max})`,
          `${FILE}:${result + 1}:5: unknown language nl (${LANGUAGES.join(', ')})`,
          `${FILE}:${badKey}:3: key "Bad_Key" must be dotted camelCase words (area.name)`,
        ].join('\n'),
      );
    } finally {
      copy.remove();
    }
  });

  it('the plugin is registered, so npm run generate reports a broken file instead of emitting', async () => {
    expect(plugins).toContain(uiTextPlugin);
    const copy = copySpec();
    try {
      const path = join(copy.root, FILE);
      writeFileSync(path, readFileSync(path, 'utf8').replace('    ja: "ログイン"\n', ''));
      const catalogue = { root: copy.root } as Catalogue;
      expect(() => uiTextPlugin.emit({ catalogue, emitted: new Map() })).toThrowError(
        /^spec\/ui-text\.yaml:\d+:3: "auth\.signIn" is missing its ja text$/,
      );
    } finally {
      copy.remove();
    }
  });
});
