/*
 * generated/ui-text.ts: the texts of the playground and console pages in the 12 languages
 * (spec/ui-text.yaml), one object per language (the server hands a page only its own language),
 * and the key type the page code is checked against.
 */
import type { Language } from '../errors/template.js';

export type UiTextKey = string;
export type UiTexts = Record<UiTextKey, string>;

/** Each language by its own name, for the language picker. */
export const LANGUAGE_NAMES: Record<Language, string> = { en: 'English' };

export const UI_TEXT: Record<Language, UiTexts> = { en: {} };

/** The page texts of one language; placeholders are {name}. */
export function uiText(language: Language): UiTexts {
  return UI_TEXT[language];
}
