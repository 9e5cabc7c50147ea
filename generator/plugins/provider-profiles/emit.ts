import type { Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';

/**
 * generated/provider-profiles.ts: every provider profile (spec/providers/*.yaml with `submit`), as
 * typed data; the runtime's one profile adapter reads it and names no provider.
 */
export const providerProfilesPlugin: Plugin = {
  name: 'provider-profiles',
  emit: ({ catalogue }) => {
    const profiles = catalogue.providers.filter((p) => p.profile);
    const table = Object.fromEntries(profiles.map((p) => [p.protocol, { name: p.protocol, ...p.profile }]));
    return [
      {
        path: 'provider-profiles.ts',
        inputs: profiles.length ? profiles.map((p) => p.file) : ['spec/providers/*.yaml'],
        contents: printModule({
          template: new URL('./template.ts', import.meta.url),
          values: { PROFILES: table },
        }),
      },
    ];
  },
};
