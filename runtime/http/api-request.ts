import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Language } from '../../generated/errors.js';
import type * as ConsoleRoutes from '../../generated/console/routes.js';
import type { DefaultedQuery } from '../../generated/requests/index.js';
import type { HeadersOf, JsonBody, OperationId, PathOf, QueryOf } from '../../generated/routes.js';
import type { Caller } from '../accounts/accounts.js';
import { consoleRefusal } from '../console-refusal.js';
import type { SessionUser } from '../console/users.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import type { RequestInput } from './request-input.js';

/** An operation of either route table: the API's (generated/routes.ts) or the console's (generated/console/routes.ts). */
export type AnyOperationId = OperationId | ConsoleRoutes.OperationId;

type Query<Op extends AnyOperationId> = Op extends OperationId
  ? QueryOf<Op>
  : Op extends ConsoleRoutes.OperationId
    ? ConsoleRoutes.QueryOf<Op>
    : never;
type Path<Op extends AnyOperationId> = Op extends OperationId
  ? PathOf<Op>
  : Op extends ConsoleRoutes.OperationId
    ? ConsoleRoutes.PathOf<Op>
    : never;
type Headers<Op extends AnyOperationId> = Op extends OperationId
  ? HeadersOf<Op>
  : Op extends ConsoleRoutes.OperationId
    ? ConsoleRoutes.HeadersOf<Op>
    : never;
type Body<Op extends AnyOperationId> = Op extends OperationId
  ? JsonBody<Op>
  : Op extends ConsoleRoutes.OperationId
    ? ConsoleRoutes.JsonBody<Op>
    : never;

/** The query of an operation as validation leaves it: the parameters with a contract default always present. */
export type ValidQuery<Op extends AnyOperationId> = Op extends keyof DefaultedQuery
  ? NonNullable<Query<Op>> & Required<Pick<NonNullable<Query<Op>>, DefaultedQuery[Op] & keyof NonNullable<Query<Op>>>>
  : NonNullable<Query<Op>>;

/** Who a request was authenticated as: an API key's caller, or a console session's user. */
export interface Principal {
  caller?: Caller;
  user?: SessionUser;
}

/**
 * What a route handler is given: the service context, the caller (or the console's signed-in
 * user), the language, and the request's parts typed from the contract, which have already passed
 * its generated validators (runtime/http/request-input.ts). A body the model's validator checks
 * (createTask, quoteTask, createVideo) is typed from the contract but checked by the handler's
 * prepareRequest.
 */
export class ApiRequest<Op extends AnyOperationId = AnyOperationId> {
  constructor(
    readonly ctx: Context,
    readonly raw: FastifyRequest,
    readonly reply: FastifyReply,
    private readonly principal: Principal,
    readonly language: Language,
    private readonly input: RequestInput,
  ) {}

  /** The authenticated caller; every API operation but the signed-link ones has one. */
  get caller(): Caller {
    if (!this.principal.caller) throw new ApiError('unauthorized');
    return this.principal.caller;
  }

  /** The console session's user; every console operation but sign-up and sign-in has one. */
  get user(): SessionUser {
    if (!this.principal.user) throw consoleRefusal('no_session', 'sign in first');
    return this.principal.user;
  }

  get requestId(): string {
    return this.raw.id;
  }

  get query(): ValidQuery<Op> {
    return this.input.query as ValidQuery<Op>;
  }

  get params(): NonNullable<Path<Op>> {
    return this.input.path as NonNullable<Path<Op>>;
  }

  /** The declared headers, by the contract's spelling (`Idempotency-Key`). */
  get headers(): NonNullable<Headers<Op>> {
    return this.input.headers as NonNullable<Headers<Op>>;
  }

  get body(): Body<Op> {
    return this.input.body as Body<Op>;
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

/** The request type of every operation, as the generated Handlers interfaces take it. */
export type ApiRequests = { [Op in OperationId]: ApiRequest<Op> };
export type ConsoleRequests = { [Op in ConsoleRoutes.OperationId]: ApiRequest<Op> };
