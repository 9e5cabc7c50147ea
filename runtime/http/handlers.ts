import type { Handlers as ConsoleHandlers } from '../../generated/console/routes.js';
import type { Handlers } from '../../generated/routes.js';
import type { Context } from '../context.js';
import { assetHandlers } from './routes/assets.js';
import { fileHandlers } from './routes/files.js';
import type { ApiRequests, ConsoleRequests } from './api-request.js';
import type { RateLimits } from './rate-limits.js';
import { consoleHandlers } from './routes/console.js';
import { operatorHandlers } from './routes/operator.js';
import { playgroundHandlers } from './routes/playground.js';
import { accountHandlers } from './routes/account.js';
import { compatHandlers } from './routes/compat.js';
import { jobHandlers } from './routes/jobs.js';
import { mediaHandlers } from './routes/media.js';
import { modelHandlers } from './routes/models.js';
import { statementHandlers } from './routes/statements.js';

/** Every operation of the contract; the generated Handlers type makes a missing one a compile error. */
export function createHandlers(): Handlers<ApiRequests> {
  return {
    ...jobHandlers,
    ...modelHandlers,
    ...accountHandlers,
    ...mediaHandlers,
    ...compatHandlers,
    ...fileHandlers,
    ...assetHandlers,
    ...statementHandlers,
  };
}

/** Every operation of the console's table (sign-in needs the limits; the password hasher is this app's). */
export function createConsoleHandlers(ctx: Context, limits: RateLimits): ConsoleHandlers<ConsoleRequests> {
  return { ...consoleHandlers(ctx, limits), ...playgroundHandlers, ...operatorHandlers };
}
