import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { components } from '../../../generated/sdk/types.js';
import { inputSchemaName } from '../../../generator/naming.js';
import { sdkTypesPlugin } from '../../../generator/plugins/sdk-types/emit.js';
import { projectCatalogue } from '../../support/catalogue.js';
import { ROOT } from '../../support/root.js';

const spec = projectCatalogue();
const openapi = readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8');
const doc = JSON.parse(openapi) as { paths: Record<string, Record<string, { operationId?: string }>> };
const [file] = await sdkTypesPlugin.emit({
  catalogue: spec,
  emitted: new Map([['openapi.json', { path: 'openapi.json', contents: openapi, inputs: [] }]]),
});
/** The text between `export interface <name> {` and the next top-level declaration. */
const section = (name: string) =>
  file.contents.slice(file.contents.indexOf(`export interface ${name} {`)).split(/\n(?=export )/)[0];

describe('sdk-types plugin (generated/sdk/types.ts)', () => {
  it('types every path and every operation of the merged document', () => {
    const paths = section('paths');
    for (const path of Object.keys(doc.paths)) expect(paths).toContain(`\n    "${path}": {`);
    const operations = section('operations');
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item))
        if (op.operationId) expect(operations).toMatch(new RegExp(`\\n    ${op.operationId}: \\{`));
  });

  it("types each model's input: fields with a default optional, required fields not", () => {
    const schemas = section('components');
    for (const model of spec.models) {
      const start = schemas.indexOf(`\n        ${inputSchemaName(model.id)}: {`);
      expect(start).toBeGreaterThan(0);
      const block = schemas.slice(start, schemas.indexOf('\n        };', start));
      for (const field of model.fields) {
        const required = (model.inputSchema.required as string[] | undefined)?.includes(field.name) ?? false;
        expect(block).toMatch(new RegExp(`\\n            ${field.name}${required ? '' : '\\?'}: `));
      }
    }
  });

  it('is the committed file, and a create body typed on one model compiles', () => {
    expect(readFileSync(join(ROOT, 'generated/sdk/types.ts'), 'utf8')).toContain(file.contents);
    const body: components['schemas']['CreateTaskRequest'] = {
      model: 'vendor_d/family_d/reference-to-video',
      input: { prompt: 'p', reference_image_urls: ['https://example.com/a.png'] },
    };
    expect(body.model).toBe('vendor_d/family_d/reference-to-video');
  });
});
