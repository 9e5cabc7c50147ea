/**
 * mediaforge's extension of the specification's events (issue 40, docs/webhooks.md): alerts before
 * the money runs out. Opt-in: an endpoint receives them only when it subscribed to them by name.
 */
export const ALERT_EVENT_TYPES = ['account.balance_low', 'key.budget_threshold'] as const;
export type AlertEventType = (typeof ALERT_EVENT_TYPES)[number];

/** Account endpoint events of the specification, then the alerts; task.canceled is accepted for old records only. */
export const EVENT_TYPES = [
  'task.completed',
  'task.succeeded',
  'task.failed',
  'task.expired',
  'task.canceled',
  ...ALERT_EVENT_TYPES,
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The terminal states task.completed stands for. */
const COMPLETED_STATES = ['succeeded', 'failed', 'expired'];

/** A comma list of events, validated and without duplicates; throws naming what is unknown. */
export function parseEvents(text: string): EventType[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !(EVENT_TYPES as readonly string[]).includes(name));
  if (unknown.length) throw new Error(`unknown event ${unknown.join(', ')}; use ${EVENT_TYPES.join(', ')}`);
  if (names.length === 0) throw new Error(`--events needs at least one of ${EVENT_TYPES.join(', ')}`);
  return [...new Set(names)] as EventType[];
}

/**
 * The event an endpoint subscribed to `events` receives for a task that ended in `state`, if any:
 * the specific `task.<state>` when it is subscribed, else `task.completed` (for succeeded, failed
 * and expired). One delivery per endpoint and task, whichever matches.
 */
export function eventFor(events: readonly string[], state: string): EventType | undefined {
  const specific = `task.${state}`;
  if ((EVENT_TYPES as readonly string[]).includes(specific) && events.includes(specific)) return specific as EventType;
  if (COMPLETED_STATES.includes(state) && events.includes('task.completed')) return 'task.completed';
  return undefined;
}
