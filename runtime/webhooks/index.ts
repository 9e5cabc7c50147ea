import type { ResolutionHook } from '../tasks/resolve-task.js';
import type { WorkHandler } from '../worker/worker.js';
import { deliverHandler } from './deliver.js';
import { DELIVER_WORK, enqueueDeliveries } from './enqueue.js';

/**
 * Webhooks: task callbacks and Standard Webhooks account endpoints. The resolution hook writes
 * delivery rows in the resolving transaction; the `deliver` work kind attempts them. Nothing here
 * runs on import: runtime/service.ts hands both to the service it builds.
 */
export const webhookResolutionHook: ResolutionHook = enqueueDeliveries;

export const webhookWorkHandlers: Record<string, WorkHandler> = { [DELIVER_WORK]: deliverHandler() };
