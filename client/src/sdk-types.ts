/**
 * The generated SDK types (openapi-typescript's types of the merged OpenAPI document). In this
 * repository the file re-exports generated/sdk/types.ts; the package build (scripts/build-client.mjs)
 * replaces it with a copy of that file, so the published package carries the generated types
 * themselves and nothing outside client/.
 */
export type * from '../../generated/sdk/types.js';
