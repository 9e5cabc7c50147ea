/*
 * The catalogue's library, as generated code and the runtime import it: result types, the mapping of
 * ajv errors to field problems, cross-field rules, integer money, billable seconds and prompt-marker
 * matching. The code is hand-written in catalogue-core/ (one concept per file, each with its
 * table-driven test under test/unit/catalogue-core/); this module only re-exports it.
 */
export * from '../../../catalogue-core/issues.js';
export * from '../../../catalogue-core/ajv-errors.js';
export * from '../../../catalogue-core/json-values.js';
export * from '../../../catalogue-core/rules.js';
export * from '../../../catalogue-core/money.js';
export * from '../../../catalogue-core/price.js';
export * from '../../../catalogue-core/markers.js';
export * from '../../../catalogue-core/model-patterns.js';
export * from '../../../catalogue-core/price-book.js';
