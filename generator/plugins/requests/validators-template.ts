/*
 * generated/requests/validators.d.ts: the declarations of ajv's standalone validators
 * (validators.js). This is the requests plugin's template for them: the generator adds one
 * `export declare const <operationId><Part>: RequestValidator;` per compiled validator.
 */

/** The fields of ajv's ErrorObject the runtime reads. */
export interface RequestValidatorError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
}

/** An ajv standalone validator: true when the value passed; fills defaults in place. */
export interface RequestValidator {
  (value: unknown): boolean;
  errors?: RequestValidatorError[] | null;
}
