import { describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { serviceForSuite } from '../support/suite-service.js';
import { expectOk } from './helpers.js';

/** GET /models and /models/{model} carry each model's deprecation: null for every current model of the catalogue. */
describe('models: the deprecated field', () => {
  const svc = serviceForSuite(100);

  it('GET /models lists deprecated for every model, as the catalogue has it', async () => {
    const r = await svc.t.call('GET', '/api/v1/models', { key: svc.account.apiKey });
    expectOk(r);
    expect(r.body.data.items.length).toBeGreaterThan(0);
    for (const item of r.body.data.items) {
      expect(item, item.id).toHaveProperty('deprecated');
      expect(item.deprecated, item.id).toEqual(catalogue.get(item.id)!.info.deprecated);
    }
  });

  it('GET /models/{model} has it too', async () => {
    const id = [...catalogue.keys()][0];
    const r = await svc.t.call('GET', `/api/v1/models/${encodeURIComponent(id)}`, { key: svc.account.apiKey });
    expectOk(r);
    expect(r.body.data).toMatchObject({ id, deprecated: catalogue.get(id)!.info.deprecated });
  });
});
