import { describe, expect, it } from 'vitest';
import { assignFormValue, coerceFormValue, formKeySegments } from '../../runtime/compat/form.js';

/** The multipart reading of POST /v1/videos: the openai SDK's bracketed keys and string values. */
describe('compat form fields', () => {
  it('splits bracketed keys', () => {
    expect(formKeySegments('prompt')).toEqual(['prompt']);
    expect(formKeySegments('input_reference[image_url]')).toEqual(['input_reference', 'image_url']);
    expect(formKeySegments('loras[][path]')).toEqual(['loras', '', 'path']);
    expect(formKeySegments('odd]key[')).toEqual(['odd]key[']);
  });

  it('builds nested objects and arrays the way the SDK flattens them', () => {
    const body: Record<string, unknown> = {};
    for (const [key, value] of [
      ['input_reference[image_url]', 'https://example.com/a.png'],
      ['reference_image_urls[]', 'https://example.com/b.png'],
      ['reference_image_urls[]', 'https://example.com/c.png'],
      ['loras[][path]', 'https://example.com/one.safetensors'],
      ['loras[][scale]', '1'],
      ['loras[][path]', 'https://example.com/two.safetensors'],
      ['loras[][scale]', '0.5'],
    ])
      assignFormValue(body, key, value);
    expect(body).toEqual({
      input_reference: { image_url: 'https://example.com/a.png' },
      reference_image_urls: ['https://example.com/b.png', 'https://example.com/c.png'],
      loras: [
        { path: 'https://example.com/one.safetensors', scale: '1' },
        { path: 'https://example.com/two.safetensors', scale: '0.5' },
      ],
    });
  });

  it('refuses prototype keys and shape clashes', () => {
    expect(() => assignFormValue({}, '__proto__[polluted]', 'x')).toThrow();
    expect(() => assignFormValue({}, 'constructor[prototype][x]', 'x')).toThrow();
    const body: Record<string, unknown> = {};
    assignFormValue(body, 'a[]', 'x');
    expect(() => assignFormValue(body, 'a[b]', 'y')).toThrow();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('coerces strings by the input schema, and only where the schema asks for it', () => {
    const integer = { type: 'integer', anyOf: [{ const: -1 }, { minimum: 1, maximum: 30 }] };
    expect(coerceFormValue('8', integer)).toBe(8);
    expect(coerceFormValue('-1', integer)).toBe(-1);
    expect(coerceFormValue('eight', integer)).toBe('eight');
    expect(coerceFormValue('true', { type: 'boolean' })).toBe(true);
    expect(coerceFormValue('false', { type: 'boolean' })).toBe(false);
    expect(coerceFormValue('42', { type: 'string' })).toBe('42');
    expect(coerceFormValue(['1', '2'], { type: 'array', items: { type: 'number' } })).toEqual([1, 2]);
    expect(
      coerceFormValue([{ path: 'p', scale: '0.5' }], {
        type: 'array',
        items: { type: 'object', properties: { path: { type: 'string' }, scale: { type: 'number' } } },
      }),
    ).toEqual([{ path: 'p', scale: 0.5 }]);
    expect(coerceFormValue('7', undefined)).toBe('7');
  });
});
