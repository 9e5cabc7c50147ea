import type { Plugin } from '../../plugin.js';
import { printModule } from '../../print/module.js';

/**
 * generated/errors.ts: the error catalogue as data (business codes, validation messages, task
 * error codes, warnings in 12 languages) and the one function that turns a MessageRef into text;
 * the code is ./template.ts, the tables come from spec/errors.yaml.
 */
export const errorsPlugin: Plugin = {
  name: 'errors',
  dependsOn: ['support'],
  emit: ({ catalogue }) => {
    const { errors } = catalogue;
    const codes = Object.fromEntries(
      errors.codes.map((c) => [c.name, { code: c.code, http: c.http, messages: c.messages }]),
    );
    return [
      {
        path: 'errors.ts',
        contents: printModule({
          template: new URL('./template.ts', import.meta.url),
          imports: { '../support/template.js': './support.js' },
          values: {
            LANGUAGES: errors.languages,
            CODES: codes,
            VALIDATION_MESSAGES: errors.validation,
            TASK_ERRORS: errors.taskErrors,
            WARNING_MESSAGES: errors.warnings,
          },
        }),
        inputs: ['spec/errors.yaml'],
      },
    ];
  },
};
