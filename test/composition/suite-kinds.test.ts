import { describe, expect, it } from 'vitest';
import { isDatabaseSuite, isStoreSuite, relativeImports } from '../support/suite-kinds.js';

/** Where a suite runs is found from what it is (vitest.config.ts): the rules, on files given as text. */
describe('suite kinds', () => {
  const files: Record<string, string> = {
    'test/support/service.ts': "export const TEST_DB = 'sqlite';",
    'test/http/helpers.ts': "import { startTestService } from '../support/service.js';",
    'test/http/direct.test.ts': "import { startTestService } from '../support/service.js';",
    'test/http/through-helper.test.ts': "import {\n  createTask,\n} from './helpers.js';",
    'test/unit/pure.test.ts': "import { money } from '../../runtime/money.js';",
    'test/composition/sample.test.ts': "const sample = `import { x } from '../support/service.js'`;",
    'test/reexport.test.ts': "export { startTestService } from './support/service.js';",
    'test/cycle-a.ts': "import './cycle-b.js';",
    'test/cycle-b.ts': "import './cycle-a.js';",
    'test/cycle.test.ts': "import './cycle-a.js';",
  };
  const read = (path: string) => files[path];

  it.each<[string, { given: string; want: boolean }]>([
    ['imports the engine choice', { given: 'test/http/direct.test.ts', want: true }],
    [
      'reaches it through a helper, over a multi-line import',
      { given: 'test/http/through-helper.test.ts', want: true },
    ],
    ['imports only runtime/', { given: 'test/unit/pure.test.ts', want: false }],
    ['names it only inside a string', { given: 'test/composition/sample.test.ts', want: false }],
    ['re-exports it', { given: 'test/reexport.test.ts', want: true }],
    ['imports in a cycle that never reaches it', { given: 'test/cycle.test.ts', want: false }],
  ])('database suite: %s', (_name, { given, want }) => {
    expect(isDatabaseSuite(given, read)).toBe(want);
  });

  it.each<[string, { given: string; want: boolean }]>([
    ['a line comment marker', { given: '// @store-suite: uploads go to the store\nimport x', want: true }],
    ['a marker in the header block', { given: '/**\n * What it tests.\n * @store-suite\n */', want: true }],
    ['no marker', { given: '/** uploads to the local store */', want: false }],
    ['the marker inside a string', { given: "const text = '@store-suite';", want: false }],
  ])('store suite: %s', (_name, { given, want }) => {
    expect(isStoreSuite(given)).toBe(want);
  });

  it('resolves .js to .ts and .mjs to .mts relative to the importing file', () => {
    expect(
      relativeImports('test/a/b.test.ts', "import { x } from '../support/y.js';\nimport z from './z.mjs';"),
    ).toEqual(['test/support/y.ts', 'test/a/z.mts']);
  });
});
