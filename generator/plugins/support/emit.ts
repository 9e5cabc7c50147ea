import { readFileSync } from 'node:fs';
import type { Plugin } from '../../plugin.js';

/** generated/support.ts: the constant shared code of every generated module. */
export const supportPlugin: Plugin = {
  name: 'support',
  emit: () => [
    {
      path: 'support.ts',
      contents: readFileSync(new URL('./template.ts', import.meta.url), 'utf8'),
      inputs: ['generator/plugins/support/template.ts'],
    },
  ],
};
