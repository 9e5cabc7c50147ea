/*
 * generated/routes.ts and generated/console/routes.ts: an OpenAPI document's route table, which the
 * runtime binds (the console's too, through the one binder), and a `Handlers` interface with one typed
 * method per operationId, so a missing handler is a type error. This is the routes plugin's
 * template, printed with the operations filled in.
 */
import type { operations } from '../../../generated/sdk/types.js';

/** Every operationId of the document (filled in by the generator). */
export type OperationId = never;

/** The layers of the document's operations (filled in by the generator). */
type Layer = 'envelope' | 'compatible' | 'console';

export interface RouteDef {
  readonly operationId: OperationId;
  readonly method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
  /** Path as in the OpenAPI document. */
  readonly path: string;
  readonly fastifyPath: string;
  /** envelope: answers (errors too) in the {code, msg, data, request_id} envelope; compatible: the third-party shapes (the operation's x-layer); console: the envelope, with the console's refusals. */
  readonly layer: Layer;
  /** How the body is read: JSON (also where there is none), raw bytes as a stream, or multipart/form-data (JSON too). */
  readonly body: 'json' | 'raw' | 'multipart';
  /** The path parameter (the last) that may also arrive with unencoded slashes (x-spans-segments). */
  readonly spansSegments?: string;
  /** false: reached by a signed link, not a Bearer key (console: without a session, behind X-Requested-With). */
  readonly auth: boolean;
  /** operator: the security is operatorSession; a signed-in user without the role is refused (403) before the input is read. */
  readonly role?: 'operator';
}

/**
 * Every operation of the document: the merged OpenAPI document (generated/routes.ts), or the
 * console's internal one, x-internal, answered by the same binder behind the session
 * (generated/console/routes.ts).
 */
export const routes: readonly RouteDef[] = [];

/** The JSON body of the 2xx responses of an operation. */
type SuccessBody<Op extends OperationId> = {
  [S in keyof operations[Op]['responses']]: S extends 200 | 201 | 202
    ? operations[Op]['responses'][S] extends { content: { 'application/json': infer B } }
      ? B
      : never
    : never;
}[keyof operations[Op]['responses']];
/** What a handler returns as `data`: the envelope's data on the main API, the whole body on the compatible layer. */
export type ReplyData<Op extends OperationId> =
  SuccessBody<Op> extends { code: number; data?: infer D } ? D : SuccessBody<Op>;
export type JsonBody<Op extends OperationId> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
export type QueryOf<Op extends OperationId> = operations[Op]['parameters'] extends { query?: infer P } ? P : never;
export type PathOf<Op extends OperationId> = operations[Op]['parameters'] extends { path?: infer P } ? P : never;
export type HeadersOf<Op extends OperationId> = operations[Op]['parameters'] extends { header?: infer P } ? P : never;
/** A JSON reply, or a raw one (bytes, a redirect) for the operations that answer with no JSON. */
export type RouteReply<Op extends OperationId> =
  | { status: number; data: ReplyData<Op>; headers?: Record<string, string> }
  | { status: number; raw: Uint8Array | NodeJS.ReadableStream | null; headers: Record<string, string> };

/**
 * One handler per operationId, each given its operation's request type; the runtime must implement
 * every one. (Filled in by the generator: one method per operation, documented by its method, path
 * and summary.)
 */
export interface Handlers<Requests extends { [Op in OperationId]: unknown }> {
  /** A sample, replaced by the operations' methods. */
  sample(request: Requests[OperationId]): Promise<RouteReply<OperationId>>;
}
