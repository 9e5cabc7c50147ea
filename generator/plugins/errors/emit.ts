import type { Plugin } from '../../plugin.js';

/**
 * generated/errors.ts: the error catalogue as data (business codes, validation messages, task
 * error codes, warnings in 12 languages) and the one function that turns a MessageRef into text.
 */
export const errorsPlugin: Plugin = {
  name: 'errors',
  dependsOn: ['support'],
  emit: ({ catalogue }) => {
    const { errors } = catalogue;
    const codes = Object.fromEntries(errors.codes.map((c) => [c.name, { code: c.code, http: c.http, messages: c.messages }]));
    const lit = (value: unknown) => JSON.stringify(value, null, 2);
    return [
      {
        path: 'errors.ts',
        contents: [
          `import type { MessageRef } from './support.js';`,
          '',
          `export const LANGUAGES = ${JSON.stringify(errors.languages)} as const;`,
          'export type Language = (typeof LANGUAGES)[number];',
          'type Messages = Record<Language, string>;',
          '',
          '/** Business codes by name: five digits, the first three are the HTTP status. */',
          `export const CODES = ${lit(codes)} as const satisfies Record<string, { code: number; http: number; messages: Messages }>;`,
          'export type ErrorName = keyof typeof CODES;',
          '',
          `export const VALIDATION_MESSAGES: Record<string, Messages> = ${lit(errors.validation)};`,
          '',
          '/** errorCode values of failed or expired tasks, with their service-side messages. */',
          `export const TASK_ERRORS = ${lit(errors.taskErrors)} as const satisfies Record<string, Messages>;`,
          'export type TaskErrorCode = keyof typeof TASK_ERRORS;',
          '',
          `export const WARNING_MESSAGES: Record<string, Messages> = ${lit(errors.warnings)};`,
          '',
          'const ALL: Record<string, Messages> = { ...VALIDATION_MESSAGES, ...TASK_ERRORS, ...WARNING_MESSAGES };',
          '',
          '/** The text of a message reference in a language; nested references (conditions) are formatted first. */',
          'export function formatMessage(ref: MessageRef, language: Language): string {',
          '  const template = ALL[ref.key]?.[language] ?? ALL[ref.key]?.en ?? ref.key;',
          '  return template.replace(/\\{(\\w+)\\}/g, (whole, name: string) => {',
          '    const value = ref.params[name];',
          '    if (value === undefined) return whole;',
          "    return typeof value === 'object' ? formatMessage(value, language) : String(value);",
          '  });',
          '}',
          '',
          '/** The message of a business code in a language, with its placeholders filled. */',
          'export function codeMessage(name: ErrorName, language: Language, params: Record<string, string | number> = {}): string {',
          '  const template: string = CODES[name].messages[language];',
          '  return template.replace(/\\{(\\w+)\\}/g, (whole, key: string) => (params[key] === undefined ? whole : String(params[key])));',
          '}',
          '',
        ].join('\n'),
        inputs: ['spec/errors.yaml'],
      },
    ];
  },
};
