import { describe, expect, it } from 'vitest';
import { emitAll } from '../../generator/generate.js';
import { loadCatalogue } from '../../generator/load/catalogue.js';
import { GENERATED_NOTICE, withHeader, writeAll } from '../../generator/write.js';
import { ROOT } from '../support/root.js';

describe('generated/ is deterministic and current', () => {
  it('two runs give identical bytes', async () => {
    const [a, b] = [await emitAll(loadCatalogue(ROOT)), await emitAll(loadCatalogue(ROOT))];
    expect(a.map(withHeader)).toEqual(b.map(withHeader));
  }, 60_000);

  it('every generated file starts with the notice and names its inputs', async () => {
    for (const file of await emitAll(loadCatalogue(ROOT))) {
      const text = withHeader(file);
      expect(text.slice(0, 400)).toContain(GENERATED_NOTICE);
      expect(text.slice(0, 2000)).toContain('Inputs: ');
    }
  }, 60_000);

  it("the committed generated/ (and the Python client's generated half) matches spec/ (the --check mode finds nothing stale)", async () => {
    const result = writeAll(ROOT, await emitAll(loadCatalogue(ROOT)), true);
    expect(result.stale).toEqual([]);
  }, 60_000);
});
