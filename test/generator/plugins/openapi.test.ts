import { lint, loadConfig } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { catalogue } from '../../../generated/catalogue.js';
import doc from '../../../generated/openapi.json' with { type: 'json' };
import { ROOT } from '../../support/root.js';

describe('the merged OpenAPI document', () => {
  it('passes the Redocly recommended ruleset with no errors', async () => {
    const problems = await lint({ ref: `${ROOT}/generated/openapi.json`, config: await loadConfig({}) });
    const errors = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId}: ${p.message} ${p.location?.[0]?.pointer}`);
    expect(errors).toEqual([]);
  }, 60_000);

  it('is OpenAPI 3.1.0 at version 1.0.0', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('has one input schema per model and a create body discriminated on model', () => {
    const schemas = doc.components.schemas as Record<string, any>;
    const body = schemas.CreateTaskRequest;
    expect(body.oneOf).toHaveLength(catalogue.size);
    expect(Object.keys(body.discriminator.mapping).sort()).toEqual([...catalogue.keys()].sort());
    for (const [id, ref] of Object.entries(body.discriminator.mapping as Record<string, string>)) {
      const variant = schemas[ref.split('/').pop()!];
      expect(variant.properties.model.const).toBe(id);
      const input = schemas[variant.properties.input.$ref.split('/').pop()];
      expect(input.properties).toEqual(catalogue.get(id)!.info.inputSchema.properties);
    }
  });
});
