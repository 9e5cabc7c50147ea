import type { ResolutionHook } from '../tasks/resolve-task.js';
import type { WorkHandlers } from '../queue/work-handler.js';
import type { AcceptedHook } from '../tasks/acceptance.js';
import { raiseAlerts } from './alerts.js';
import { deliverHandler } from './deliver.js';
import { enqueueDeliveries } from './enqueue.js';

/**
 * Webhooks: task callbacks and Standard Webhooks account endpoints. The resolution hook writes
 * delivery rows in the resolving transaction; the `deliver` work kind attempts them. Nothing here
 * runs on import: runtime/service.ts hands both to the service it builds.
 */
export const webhookResolutionHook: ResolutionHook = enqueueDeliveries;

/** Alerts a new task's hold crossed (account.balance_low, key.budget_threshold), right after it commits. */
export const webhookAcceptedHook: AcceptedHook = raiseAlerts;

export const webhookWorkHandlers = { deliver: deliverHandler() } satisfies WorkHandlers;
