/**
 * The mediaforge TypeScript client, `@mediaforge/client`: `import { Mediaforge } from '@mediaforge/client'`.
 *
 *   const client = new Mediaforge({ apiKey: process.env.MEDIAFORGE_KEY!, baseUrl: 'https://host' });
 *   const task = await client.tasks.create({ model: 'vendor_d/family_d/reference-to-video', input: { ... } }, { wait: 30 });
 *
 * Hand-written core (core/), types from the generated OpenAPI types (sdk-types.ts). This entry runs
 * in Node and in browsers: it imports no `node:` module. The webhook verifiers, which need
 * node:crypto and the standardwebhooks package, are on their own entry, `@mediaforge/client/webhooks`.
 */
import { Core, type ClientOptions } from './core/request.js';
import { Credit, Keys, Statements, Usage } from './resources/account.js';
import { Assets } from './resources/assets.js';
import { Files } from './resources/files.js';
import { Models } from './resources/models.js';
import { Tasks } from './resources/tasks.js';

export class Mediaforge {
  readonly tasks: Tasks;
  readonly models: Models;
  readonly credit: Credit;
  /** The calling key's policy (issue 40). */
  readonly keys: Keys;
  readonly usage: Usage;
  /** The account's monthly statements (issue 39; the key's account-reports scope). */
  readonly statements: Statements;
  readonly files: Files;
  readonly assets: Assets;
  /** The typed openapi-fetch client underneath, for operations without a resource method. */
  readonly core: Core;

  constructor(options: ClientOptions) {
    this.core = new Core(options);
    this.tasks = new Tasks(this.core);
    this.models = new Models(this.core);
    this.credit = new Credit(this.core);
    this.keys = new Keys(this.core);
    this.usage = new Usage(this.core);
    this.statements = new Statements(this.core);
    this.files = new Files(this.core);
    this.assets = new Assets(this.core);
  }
}

export default Mediaforge;
export type { ClientOptions, RequestOptions, ApiResult, FetchLike } from './core/request.js';
export { PageIterator, type Page } from './core/pagination.js';
export {
  MediaforgeError,
  ApiError,
  BadRequestError,
  InvalidInputError,
  AuthenticationError,
  InsufficientCreditsError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  QuoteConflictError,
  IdempotencyConflictError,
  IdempotencyInProgressError,
  PayloadTooLargeError,
  RateLimitError,
  InternalServerError,
  NotImplementedError,
  ServiceUnavailableError,
  ConnectionError,
  TimeoutError,
  WebhookVerificationError,
  errorClassFor,
} from './core/errors.js';
export { isTerminal, TERMINAL_STATES, type CreateOptions, type Created, type WaitOptions } from './resources/tasks.js';
export { guessContentType, type UploadOptions, type UploadSource } from './resources/files.js';
export type * from './types.js';
