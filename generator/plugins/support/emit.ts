import type { Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';

/** generated/support.ts: the constant shared code of every generated module, printed from ./template.ts (it has no placeholders). */
export const supportPlugin: Plugin = {
  name: 'support',
  emit: () => [
    {
      path: 'support.ts',
      contents: printModule({ template: new URL('./template.ts', import.meta.url) }),
      inputs: ['generator/plugins/support/template.ts'],
    },
  ],
};
