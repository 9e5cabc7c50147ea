/**
 * The pages' one way to call the console's JSON API, typed by the internal part of the contract
 * (spec/openapi.yaml, `x-internal`; generated/console/types.ts): a path, its method, its path
 * parameters and body are checked against the document at compile time, and the answer's `data`
 * has the document's type, so no call site restates a response type.
 */
import type { paths } from '../../../generated/console/types.js';

export interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

/** What a refused call carries: the console's reason and English detail, or the API's error data. */
export interface ErrorData {
  reason?: string;
  detail?: string;
  param?: string;
  errors?: { path: string; message: string }[];
}

export class CallError extends Error {
  constructor(
    readonly status: number,
    readonly envelope: Envelope<ErrorData | null>,
  ) {
    super(envelope?.msg ?? `HTTP ${status}`);
  }
}

type Method = 'get' | 'post' | 'put';
type Path = keyof paths;
type Operation<P extends Path, M extends Method> = paths[P][M];
/** The paths that have an operation for the method. */
export type PathFor<M extends Method> = {
  [P in Path]: Operation<P, M> extends { responses: object } ? P : never;
}[Path];
type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type SuccessOf<O> = O extends { responses: { 200: infer R } } ? JsonOf<R> : never;
/** The `data` of an operation's successful answer. */
export type ApiData<P extends Path, M extends Method> =
  SuccessOf<Operation<P, M>> extends { data: infer D } ? D : never;
type BodyOf<O> = O extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : never;
type PathParamsOf<O> = O extends { parameters: { path: infer P } } ? P : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type Options<O> = ([PathParamsOf<O>] extends [never] ? { params?: undefined } : { params: PathParamsOf<O> }) &
  ([BodyOf<O>] extends [never] ? { body?: undefined } : { body?: BodyOf<O> }) &
  ([QueryOf<O>] extends [never] ? { query?: undefined } : { query?: QueryOf<O> });
type OptionsArg<O> = [PathParamsOf<O>] extends [never] ? [options?: Options<O>] : [options: Options<O>];

let csrfToken = '';

/** The session's CSRF token, sent in X-CSRF-Token on every state-changing call. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export function csrfHeader(): Record<string, string> {
  return { 'X-CSRF-Token': csrfToken };
}

export async function readEnvelope<T>(response: Response): Promise<T> {
  const envelope = (await response
    .json()
    .catch(() => ({ code: response.status, msg: response.statusText, data: null }))) as Envelope<T>;
  if (!response.ok) throw new CallError(response.status, envelope as Envelope<ErrorData | null>);
  return envelope.data;
}

/** One call of the console's API: `{name}` segments of the path are filled from `params`. */
export async function api<M extends Method, P extends PathFor<M>>(
  method: M,
  path: P,
  ...[options]: OptionsArg<Operation<P, M>>
): Promise<ApiData<P, M>> {
  const params = (options?.params ?? {}) as Record<string, string>;
  const query = Object.entries((options?.query ?? {}) as Record<string, string | undefined>).filter(
    (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
  );
  const url =
    (path as string).replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name])) +
    (query.length ? `?${new URLSearchParams(query).toString()}` : '');
  const headers: Record<string, string> = { 'X-Requested-With': 'mediaforge-console' };
  if (method !== 'get') Object.assign(headers, csrfHeader());
  const body = options?.body;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(url, {
    method: method.toUpperCase(),
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  return readEnvelope<ApiData<P, M>>(response);
}
