/**
 * Names the generator derives from spec ids, in one place so that every plugin that refers to a
 * model's generated schema, validator or price table spells it the same way.
 */

/** A model id as an identifier: `vendor_a/family_a-2.0/reference-to-video` -> `vendor_a_family_a_2_0_reference_to_video`. */
export const modelIdent = (id: string): string => id.replace(/[^A-Za-z0-9]/g, '_');

/** The component schema of a model's input in the merged OpenAPI document. */
export const inputSchemaName = (id: string): string => `Input_${modelIdent(id)}`;

/** The component schema of the create/quote body on one model. */
export const createRequestSchemaName = (id: string): string => `CreateTaskRequest_${modelIdent(id)}`;

/** A model's validator module under generated/validators/, without its extension. */
export const validatorModulePath = (id: string): string => `validators/${id}`;
