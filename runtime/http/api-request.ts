import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Language } from '../../generated/errors.js';
import type { DefaultedQuery } from '../../generated/requests/index.js';
import type { HeadersOf, JsonBody, OperationId, PathOf, QueryOf } from '../../generated/routes.js';
import type { Caller } from '../accounts/accounts.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import type { RequestInput } from './request-input.js';

/** The query of an operation as validation leaves it: the parameters with a contract default always present. */
export type ValidQuery<Op extends OperationId> = Op extends keyof DefaultedQuery
  ? NonNullable<QueryOf<Op>> &
      Required<Pick<NonNullable<QueryOf<Op>>, DefaultedQuery[Op] & keyof NonNullable<QueryOf<Op>>>>
  : NonNullable<QueryOf<Op>>;

/**
 * What a route handler is given: the service context, the caller, the language, and the request's
 * parts typed from the contract, which have already passed its generated validators
 * (runtime/http/request-input.ts). A body the model's validator checks (createTask, quoteTask,
 * createVideo) is typed from the contract but checked by the handler's prepareRequest.
 */
export class ApiRequest<Op extends OperationId = OperationId> {
  constructor(
    readonly ctx: Context,
    readonly raw: FastifyRequest,
    readonly reply: FastifyReply,
    private readonly maybeCaller: Caller | undefined,
    readonly language: Language,
    private readonly input: RequestInput,
  ) {}

  /** The authenticated caller; every operation but the signed-link ones has one. */
  get caller(): Caller {
    if (!this.maybeCaller) throw new ApiError('unauthorized');
    return this.maybeCaller;
  }

  get requestId(): string {
    return this.raw.id;
  }

  get query(): ValidQuery<Op> {
    return this.input.query as ValidQuery<Op>;
  }

  get params(): NonNullable<PathOf<Op>> {
    return this.input.path as NonNullable<PathOf<Op>>;
  }

  /** The declared headers, by the contract's spelling (`Idempotency-Key`). */
  get headers(): NonNullable<HeadersOf<Op>> {
    return this.input.headers as NonNullable<HeadersOf<Op>>;
  }

  get body(): JsonBody<Op> {
    return this.input.body as JsonBody<Op>;
  }

  /** A header the contract does not declare (the raw upload's Content-Type and Content-Length). */
  rawHeader(name: string): string | undefined {
    const value = this.raw.headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  }

  /** Resolves when the client goes away, so a held wait stops (the task itself keeps running). */
  get disconnected(): AbortSignal {
    const controller = new AbortController();
    this.raw.raw.once('close', () => controller.abort());
    this.reply.raw.once('close', () => controller.abort());
    return controller.signal;
  }
}

/** The request type of every operation, as the generated Handlers interface takes it. */
export type ApiRequests = { [Op in OperationId]: ApiRequest<Op> };
