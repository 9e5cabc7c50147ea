import type { Handlers } from '../../generated/routes.js';
import { assetHandlers } from './routes/assets.js';
import { fileHandlers } from './routes/files.js';
import type { ApiRequests } from './api-request.js';
import { accountHandlers } from './routes/account.js';
import { compatHandlers } from './routes/compat.js';
import { jobHandlers } from './routes/jobs.js';
import { mediaHandlers } from './routes/media.js';
import { modelHandlers } from './routes/models.js';

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
  };
}
