import type { Context } from '../context.js';
import type { WorkItem } from './claim.js';
import type { WorkKind } from './work-kinds.js';

export type { WorkItem } from './claim.js';

/**
 * What a handler wants done with its item: finished, or tried again at a later time. `attempts`
 * counts the claims of an item; a handler may set it (a poll that got an answer starts again from
 * 0: only failures in a row count against a deployment; a 429 does not count at all).
 */
export type WorkOutcome = { done: true } | { retryAt: number; attempts?: number };

/**
 * `signal` (always given by the worker; a test calling a handler may leave it out) is aborted, its
 * reason an ItemAborted, when the item must stop where it is: another worker took its lease over,
 * or the service is shutting down and its grace ran out. A handler that can run long (a download)
 * passes it on, and once it is aborted records nothing more.
 */
export type WorkHandler = (ctx: Context, item: WorkItem, signal?: AbortSignal) => Promise<WorkOutcome>;

/** Handlers of some kinds (a room's share of the service's map). */
export type WorkHandlers = { [K in WorkKind]?: WorkHandler };

/** A handler for every kind: the map the service hands its worker (a kind without one is a type error). */
export type AllWorkHandlers = { [K in WorkKind]: WorkHandler };
