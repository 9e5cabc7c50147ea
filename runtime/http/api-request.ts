import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Language } from '../../generated/errors.js';
import type { Caller } from '../accounts/accounts.js';
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';

/** What a route handler is given: the service context, the caller, the language and the parsed parts. */
export class ApiRequest {
  constructor(
    readonly ctx: Context,
    readonly raw: FastifyRequest,
    readonly reply: FastifyReply,
    private readonly maybeCaller: Caller | undefined,
    readonly language: Language,
  ) {}

  /** The authenticated caller; every operation but the signed-link ones has one. */
  get caller(): Caller {
    if (!this.maybeCaller) throw new ApiError('unauthorized');
    return this.maybeCaller;
  }

  get requestId(): string {
    return this.raw.id;
  }

  get body(): unknown {
    return this.raw.body;
  }

  query(name: string): string | undefined {
    const value = (this.raw.query as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : Array.isArray(value) ? String(value[0]) : undefined;
  }

  param(name: string): string {
    return (this.raw.params as Record<string, string>)[name] ?? '';
  }

  header(name: string): string | undefined {
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
