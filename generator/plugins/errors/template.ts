/*
 * generated/errors.ts: the error catalogue as data (business codes, validation messages, task
 * error codes, warnings in 12 languages, from spec/errors.yaml) and the one function that turns a
 * MessageRef into text.
 */
import type { MessageRef } from '../support/template.js';

export const LANGUAGES = ['en'] as const;
export type Language = (typeof LANGUAGES)[number];
type Messages = Record<Language, string>;

/** Business codes by name: five digits, the first three are the HTTP status. */
export const CODES = {
  placeholder: { code: 50001, http: 500, messages: { en: '' } },
} as const satisfies Record<string, { code: number; http: number; messages: Messages }>;
export type ErrorName = keyof typeof CODES;

export const VALIDATION_MESSAGES: Record<string, Messages> = {};

/** errorCode values of failed or expired tasks, with their service-side messages. */
export const TASK_ERRORS = {
  placeholder: { en: '' },
} as const satisfies Record<string, Messages>;
export type TaskErrorCode = keyof typeof TASK_ERRORS;

export const WARNING_MESSAGES: Record<string, Messages> = {};

const ALL: Record<string, Messages> = { ...VALIDATION_MESSAGES, ...TASK_ERRORS, ...WARNING_MESSAGES };

/** The text of a message reference in a language; nested references (conditions) are formatted first. */
export function formatMessage(ref: MessageRef, language: Language): string {
  const template = ALL[ref.key]?.[language] ?? ALL[ref.key]?.en ?? ref.key;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = ref.params[name];
    if (value === undefined) return whole;
    return typeof value === 'object' ? formatMessage(value, language) : String(value);
  });
}

/** The message of a business code in a language, with its placeholders filled. */
export function codeMessage(name: ErrorName, language: Language, params: Record<string, string | number> = {}): string {
  const template: string = CODES[name].messages[language];
  return template.replace(/\{(\w+)\}/g, (whole, key: string) =>
    params[key] === undefined ? whole : String(params[key]),
  );
}
