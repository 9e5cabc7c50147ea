import { describe, expect, it } from 'vitest';
import { catalogue } from '../../../generated/catalogue.js';
import { prices } from '../../../generated/prices.js';
import { validators } from '../../../generated/validators/index.js';
import { modelInfo } from '../../../generator/plugins/catalogue/model-info.js';
import { projectCatalogue } from '../../support/catalogue.js';

const spec = projectCatalogue();

describe('catalogue plugin (generated/catalogue.ts)', () => {
  it('holds one entry per spec model, in the spec order, with the public info of its spec file', () => {
    expect([...catalogue.keys()]).toEqual(spec.models.map((m) => m.id));
    for (const model of spec.models) expect(catalogue.get(model.id)!.info).toEqual(modelInfo(model));
  });

  it('wires each model to its own generated validator and price function', () => {
    for (const model of spec.models) {
      const entry = catalogue.get(model.id)!;
      expect(entry.validate).toBe(validators.get(model.id));
      expect(entry.price).toBe(prices.get(model.id));
    }
  });

  it("gives marker warnings under the model's own marker style and reference fields", () => {
    const model = spec.models.find(
      (m) =>
        m.markers.name === 'at-numbered' && m.fields.some((f) => f.reference === 'image' && f.schema.type === 'array'),
    )!;
    const field = model.fields.find((f) => f.reference === 'image' && f.schema.type === 'array')!.name;
    const entry = catalogue.get(model.id)!;
    expect(entry.warnings({ prompt: '@Image1 beside @Image2', [field]: ['https://example.com/a.png'] })).toEqual([
      {
        code: 'marker_unmatched',
        path: 'input.prompt',
        message: { key: 'marker_unmatched', params: { marker: '@Image2', count: 1, kind: 'image' } },
      },
    ]);
    expect(entry.warnings({ prompt: '@Image1 only', [field]: ['https://example.com/a.png'] })).toEqual([]);
  });
});
