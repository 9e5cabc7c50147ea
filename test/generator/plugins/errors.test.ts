import { describe, expect, it } from 'vitest';
import {
  CODES,
  LANGUAGES,
  TASK_ERRORS,
  VALIDATION_MESSAGES,
  WARNING_MESSAGES,
  codeMessage,
  formatMessage,
} from '../../../generated/errors.js';
import { projectCatalogue } from '../../support/catalogue.js';

const spec = projectCatalogue().errors;

describe('errors plugin (generated/errors.ts)', () => {
  it('carries every business code of spec/errors.yaml, each in every language, its first three digits its HTTP status', () => {
    expect(LANGUAGES).toEqual(spec.languages);
    expect(Object.keys(CODES)).toEqual(spec.codes.map((c) => c.name));
    for (const c of spec.codes) {
      const generated = CODES[c.name as keyof typeof CODES];
      expect(generated).toEqual({ code: c.code, http: c.http, messages: c.messages });
      expect(Math.floor(generated.code / 100)).toBe(generated.http);
      expect(Object.keys(generated.messages)).toEqual(spec.languages);
    }
  });

  it('carries the validation, task-error and warning messages as written', () => {
    expect(VALIDATION_MESSAGES).toEqual(spec.validation);
    expect(TASK_ERRORS).toEqual(spec.taskErrors);
    expect(WARNING_MESSAGES).toEqual(spec.warnings);
  });

  it('formatMessage fills placeholders, formats a nested reference first, and falls back to English, then the key', () => {
    const minimum = formatMessage({ key: 'minimum', params: { field: 'input.duration_seconds', limit: 4 } }, 'en');
    expect(minimum).toBe(
      spec.validation.minimum.en.replace('{field}', 'input.duration_seconds').replace('{limit}', '4'),
    );
    const nested = formatMessage(
      {
        key: 'rule_required_when',
        params: {
          field: 'input.image_url',
          condition: { key: 'condition_present', params: { field: 'input.last_image_url' } },
        },
      },
      'de',
    );
    const condition = spec.validation.condition_present.de.replace('{field}', 'input.last_image_url');
    expect(nested).toBe(
      spec.validation.rule_required_when.de.replace('{field}', 'input.image_url').replace('{condition}', condition),
    );
    expect(formatMessage({ key: 'no_such_message', params: {} }, 'ja')).toBe('no_such_message');
  });

  it('codeMessage fills the placeholders it is given and leaves the others', () => {
    const withPlaceholder = spec.codes.find((c) => /\{\w+\}/.test(c.messages.en))!;
    const name = withPlaceholder.name as keyof typeof CODES;
    const placeholder = /\{(\w+)\}/.exec(withPlaceholder.messages.en)![1];
    expect(codeMessage(name, 'en', { [placeholder]: 'VALUE' })).toContain('VALUE');
    expect(codeMessage(name, 'en')).toBe(withPlaceholder.messages.en);
  });
});
