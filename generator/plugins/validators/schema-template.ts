/* The types of ajv's standalone code for one model's JSON Schema (validators/<model id>.schema.js). */
import type { AjvError } from '../support/template.js';

/** The schema's compiled function: true when the data is valid, else false with the problems in `errors`; fills in defaults. */
export declare const schemaValidate: { (data: unknown): boolean; errors?: readonly AjvError[] | null };
