import { _, str, type CodeKeywordDefinition, type KeywordCxt } from 'ajv';
import { useFunc } from 'ajv/dist/compile/util.js';
import ucs2lengthModule from 'ajv/dist/runtime/ucs2length.js';
import patternModule from 'ajv/dist/vocabularies/validation/pattern.js';

// ajv ships CommonJS: depending on the loader the default import is the function or the module object.
type CodePointCount = ((text: string) => number) & { code: string };
const ucs2length: CodePointCount =
  typeof ucs2lengthModule === 'function'
    ? (ucs2lengthModule as unknown as CodePointCount)
    : (ucs2lengthModule as unknown as { default: CodePointCount }).default;

/**
 * ajv's maxLength and minLength with the same meaning (a length in Unicode code points, as JSON
 * Schema says), the same errors (keyword, `params.limit`, message), and a fast path: a string has
 * at most as many code points as UTF-16 units and at least half as many, so the count, a loop over
 * every character, is made only when the string's `length` cannot decide. Every free string and
 * URL has a maxLength since issue 16, and counting the typical request's prompt and URLs took a
 * third of its validation (bench/README.md, issue 19).
 */
export const stringLengthKeywords: CodeKeywordDefinition = {
  keyword: ['maxLength', 'minLength'],
  type: 'string',
  schemaType: 'number',
  error: {
    message: ({ keyword, schemaCode }) =>
      str`must NOT have ${keyword === 'maxLength' ? 'more' : 'fewer'} than ${schemaCode} characters`,
    params: ({ schemaCode }) => _`{limit: ${schemaCode}}`,
  },
  code(cxt: KeywordCxt) {
    const { keyword, data, schemaCode } = cxt;
    const count = useFunc(cxt.gen, ucs2length);
    cxt.fail(
      keyword === 'maxLength'
        ? _`${data}.length > ${schemaCode} && ${count}(${data}) > ${schemaCode}`
        : _`${data}.length < 2 * ${schemaCode} && ${count}(${data}) < ${schemaCode}`,
    );
  },
};

/** ajv's own pattern keyword, added back after the lengths (see validators/emit.ts). */
export const patternKeyword: CodeKeywordDefinition =
  'keyword' in patternModule
    ? (patternModule as unknown as CodeKeywordDefinition)
    : (patternModule as unknown as { default: CodeKeywordDefinition }).default;
