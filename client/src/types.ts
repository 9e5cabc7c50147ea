/**
 * The client's public types, derived from the openapi-typescript types of the merged OpenAPI
 * document (generated/sdk/types.ts). Nothing here is written by hand per model: a new model in
 * spec/ reaches the client through `npm run generate` alone.
 */
import type { components, operations } from './sdk-types.js';

type Schemas = components['schemas'];

export type Task = Schemas['TaskRecord'];
export type TaskState = Schemas['TaskState'];
export type TaskOutput = Schemas['TaskOutput'];
export type Quote = Schemas['Quote'];
export type PurgeResult = Schemas['PurgeResult'];
export type ModelSummary = Schemas['ModelSummary'];
export type CreditBalance = Schemas['CreditBalance'];
export type CurrentKey = Schemas['CurrentKey'];
export type UsageReport = Schemas['UsageReport'];
export type Statement = Schemas['Statement'];
export type Asset = Schemas['Asset'];
export type AssetKind = Schemas['AssetKind'];
export type AssetUsage = Schemas['AssetUsage'];
export type Entity = Schemas['Entity'];
export type UploadTicket = Schemas['UploadTicket'];
export type DownloadUrls = Schemas['DownloadUrls'];
export type FieldError = Schemas['FieldError'];
export type Warning = Schemas['Warning'];

/** The generated create/quote body: a oneOf discriminated on `model`. */
export type GeneratedCreateTaskRequest = Schemas['CreateTaskRequest'];

/** Every model id of the catalogue, as a string literal union. */
export type ModelId = GeneratedCreateTaskRequest['model'];

type RequestOf<M extends ModelId> = Extract<GeneratedCreateTaskRequest, { model: M }>;

/**
 * The generated type with arrays accepted as readonly at every level (a request written `as const`
 * is accepted); required and optional fields stay as the schema says (a field with a default is
 * optional, a required one without it is a compile error).
 */
export type AcceptReadonly<T> = T extends readonly (infer E)[]
  ? readonly AcceptReadonly<E>[]
  : T extends object
    ? { [K in keyof T]: AcceptReadonly<T[K]> }
    : T;

/** The `input` of one model, typed from its generated schema. */
export type ModelInput<M extends ModelId> = AcceptReadonly<RequestOf<M>['input']>;

/** The fields of the create/quote body around `input`: callBackUrl, quoteId, expectedCredits, expectedCost. */
export type CreateTaskEnvelope = Omit<GeneratedCreateTaskRequest, 'model' | 'input'>;

/**
 * The body of `tasks.create` and `tasks.quote` for one model: `{ model, input, callBackUrl?,
 * quoteId?, expectedCredits?, expectedCost? }` where `input` is typed by `model`. A field the
 * model does not have, or a value outside a field's enum, is a compile error naming that field.
 */
export type CreateTaskParamsFor<M extends ModelId> = CreateTaskEnvelope & { model: M; input: ModelInput<M> };

/** The body for any model: the union of CreateTaskParamsFor over every model id. */
export type CreateTaskParams = { [M in ModelId]: CreateTaskParamsFor<M> }[ModelId];

export type ListTasksQuery = Omit<NonNullable<operations['listTasks']['parameters']['query']>, 'cursor'>;
export type ListAssetsQuery = Omit<NonNullable<operations['listAssets']['parameters']['query']>, 'cursor'>;
export type UsageQuery = NonNullable<operations['getUsage']['parameters']['query']>;

/** Body of a task callback, payload version 2: the envelope and task record recordInfo returns. */
export interface TaskCallbackBody {
  code: number;
  msg: string;
  data: Task;
  /** The delivery id, stable across retries of one delivery: dedupe on it. */
  request_id: string;
}

/** Body of a task callback, payload version 1 (older accounts). */
export interface TaskCallbackBodyV1 {
  task_id: string;
  state: TaskState;
  request_id: string;
  data: Task;
}

/** An account-endpoint event (Standard Webhooks delivery). */
export interface AccountEvent {
  type: 'task.completed' | 'task.succeeded' | 'task.failed' | 'task.expired' | 'task.canceled';
  timestamp: string;
  data: { object: Task };
}
