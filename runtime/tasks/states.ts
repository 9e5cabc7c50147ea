export const TERMINAL_STATES = ['succeeded', 'failed', 'canceled', 'expired'] as const;
export const OPEN_STATES = ['queued', 'running'] as const;
export const ALL_STATES = [...OPEN_STATES, ...TERMINAL_STATES] as const;
export type TaskState = (typeof ALL_STATES)[number];

export function isTerminal(state: string): boolean {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}
