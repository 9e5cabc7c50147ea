import type { WorkHandler } from '../worker/worker.js';
import { deliverHandler } from './deliver.js';
import { DELIVER_WORK, registerWebhookHooks } from './enqueue.js';

/**
 * Webhooks: task callbacks and Standard Webhooks account endpoints. Importing this module registers
 * the resolution hook that writes delivery rows in the resolving transaction; the `deliver` work
 * kind attempts them.
 */
registerWebhookHooks();

export const webhookWorkHandlers: Record<string, WorkHandler> = { [DELIVER_WORK]: deliverHandler() };

export { registerWebhookHooks } from './enqueue.js';
