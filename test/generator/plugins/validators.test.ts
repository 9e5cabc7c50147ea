import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validators } from '../../../generated/validators/index.js';
import { validatorModulePath } from '../../../generator/naming.js';
import { validatorsPlugin } from '../../../generator/plugins/validators/emit.js';
import { projectCatalogue } from '../../support/catalogue.js';
import { ROOT } from '../../support/root.js';

const spec = projectCatalogue();
const files = await validatorsPlugin.emit({ catalogue: spec, emitted: new Map() });
const load = (path: string) => import(join(ROOT, 'generated', path)) as Promise<Record<string, unknown>>;
const moduleOf = (id: string) => load(`${validatorModulePath(id)}.js`);

describe('validators plugin (generated/validators/)', () => {
  it("emits per model ajv's schema module with its declaration and the validator module, and the index", () => {
    const want = [
      ...spec.models.flatMap((m) =>
        ['.schema.js', '.schema.d.ts', '.ts'].map((ext) => `${validatorModulePath(m.id)}${ext}`),
      ),
      'validators/index.ts',
    ];
    expect(files.map((f) => f.path).sort()).toEqual(want.sort());
  });

  it("exports ajv's compiled function under the name given in standaloneCode's options, and only validateInput from the validator", async () => {
    for (const file of files.filter((f) => f.path.endsWith('.schema.js'))) {
      expect(file.contents).toContain('export const schemaValidate = ');
      expect(file.contents).not.toContain('export default');
    }
    const id = spec.models[0].id;
    expect(Object.keys(await load(`${validatorModulePath(id)}.schema.js`))).toEqual(['schemaValidate']);
    expect(Object.keys(await moduleOf(id))).toEqual(['validateInput']);
  });

  it("carries each model's cross-field rules as data and enforces them (every rule vector of generated/vectors/)", () => {
    let checked = 0;
    for (const model of spec.models) {
      const ids = new Set(model.rules.map((r) => r.id));
      const vectors = JSON.parse(readFileSync(join(ROOT, 'generated/vectors', `${model.id}.json`), 'utf8')) as {
        cases: { input: unknown; want: 'accept' | { reject: { path: string; rule: string } } }[];
      };
      for (const c of vectors.cases) {
        if (c.want === 'accept' || !ids.has(c.want.reject.rule)) continue;
        const result = validators.get(model.id)!(c.input);
        expect(result.ok).toBe(false);
        if (!result.ok)
          expect(result.errors.map((e) => ({ path: e.path, rule: e.rule }))).toContainEqual(c.want.reject);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it("maps every model id to its own module's validateInput", async () => {
    expect([...validators.keys()]).toEqual(spec.models.map((m) => m.id));
    for (const model of spec.models) expect(validators.get(model.id)).toBe((await moduleOf(model.id)).validateInput);
  });

  it('fills in the defaults on a copy, leaving the caller input untouched, and refuses an input that is not an object', () => {
    for (const model of spec.models) {
      const vectors = JSON.parse(readFileSync(join(ROOT, 'generated/vectors', `${model.id}.json`), 'utf8')) as {
        cases: { input: Record<string, unknown>; want: unknown }[];
      };
      const accepted = vectors.cases.find((c) => c.want === 'accept')!;
      const before = structuredClone(accepted.input);
      const result = validators.get(model.id)!(accepted.input);
      expect(accepted.input).toEqual(before);
      expect(result.ok).toBe(true);
      if (!result.ok) continue;
      for (const field of model.fields)
        if (field.schema.default !== undefined && !(field.name in before))
          expect(result.value[field.name]).toEqual(field.schema.default);
      expect(validators.get(model.id)!([])).toEqual({
        ok: false,
        errors: [{ path: 'input', rule: 'type', message: { key: 'type', params: { field: 'input', type: 'object' } } }],
      });
    }
  });

  it('counts maxLength and minLength in code points, as JSON Schema does: a character outside the BMP is one', () => {
    const astral = '\u{1F3AC}'; // two UTF-16 units, one character
    let checked = 0;
    for (const model of spec.models) {
      const field = model.fields.find(
        (f) =>
          f.schema.type === 'string' &&
          typeof f.schema.maxLength === 'number' &&
          f.schema.pattern === undefined &&
          f.schema.enum === undefined,
      );
      if (!field) continue;
      const vectors = JSON.parse(readFileSync(join(ROOT, 'generated/vectors', `${model.id}.json`), 'utf8')) as {
        cases: { input: Record<string, unknown>; want: unknown }[];
      };
      const accepted = vectors.cases.find((c) => c.want === 'accept')!.input;
      const max = field.schema.maxLength as number;
      const min = (field.schema.minLength as number | undefined) ?? 0;
      const rows: [string, { given: string; want: string | undefined }][] = [
        ['max characters, each two UTF-16 units', { given: astral.repeat(max), want: undefined }],
        ['one character more', { given: astral.repeat(max + 1), want: 'maxLength' }],
        ['max characters of the BMP', { given: 'a'.repeat(max), want: undefined }],
        ['one more of the BMP', { given: 'a'.repeat(max + 1), want: 'maxLength' }],
        ...(min > 0
          ? ([
              ['min characters, each two units', { given: astral.repeat(min), want: undefined }],
              ['one character fewer', { given: astral.repeat(min - 1), want: 'minLength' }],
            ] as [string, { given: string; want: string | undefined }][])
          : []),
      ];
      for (const [name, { given, want }] of rows) {
        const result = validators.get(model.id)!({ ...accepted, [field.name]: given });
        const rules = result.ok ? [] : result.errors.filter((e) => e.path.endsWith(field.name)).map((e) => e.rule);
        expect({ model: model.id, name, rules }).toEqual({ model: model.id, name, rules: want ? [want] : [] });
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
  });
});
