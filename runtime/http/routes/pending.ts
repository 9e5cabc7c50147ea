import type { Handlers } from '../../../generated/routes.js';
import { ApiError } from '../../errors.js';
import type { ApiRequest } from '../api-request.js';

/** Operations of the contract not served by this version yet: a clear 501, never a silent stub. */
export const notImplemented = async (): Promise<never> => {
  throw new ApiError('not_implemented');
};

/** None left: the files and assets operations live in runtime/files/routes.ts and runtime/assets/routes.ts. */
export type PendingOperation = never;

export const pendingHandlers: Pick<Handlers<ApiRequest>, PendingOperation> = {};
