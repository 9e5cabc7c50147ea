import type { FastifyBaseLogger } from 'fastify';
import type { KeyRevision } from './accounts/key-revision.js';
import type { BlobStore } from './blobs/blob-store.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Deployments } from './routing/router.js';
import type { FaultPoints } from './faults.js';
import type { UpstreamStats } from './routing/upstream-stats.js';
import type { CallWindow } from './routing/call-window.js';
import type { Ledger } from './ledger/ledger.js';
import type { Db } from './storage/dialect.js';
import type { AcceptedHook } from './tasks/acceptance.js';
import type { ResolutionHook } from './tasks/resolve-task.js';
import type { TaskEvents } from './tasks/task-events.js';
import type { OutboundAgents } from './net/kept-agents.js';
import type { Payments } from './payments/payments.js';
import type { ApiFirst } from './worker/api-first.js';

/**
 * What every part of the runtime is handed: one database, one clock, one secret. Built whole by
 * createService (runtime/service.ts) and never patched afterwards; each service in a process has
 * its own, and nothing of it lives in module state.
 */
export interface Context {
  config: Config;
  db: Db;
  /** The ledger's statements for the database's engine (ledger/ledger-for.ts): every change of money goes through it. */
  ledger: Ledger;
  clock: Clock;
  secret: string;
  deployments: Deployments;
  /** Submits, failures by class and poll latency per deployment, added to the shared totals every few seconds. */
  upstreamStats: UpstreamStats;
  /** This process's calls to each deployment within the cool-down window, and how many failed (runtime/routing/evidence.ts). */
  callWindow: CallWindow;
  blobs: BlobStore;
  events: TaskEvents;
  /** Changes whenever a key is revoked, in any process: the authentication cache checks it. */
  keyRevision: KeyRevision;
  /** The HTTP server's logger (pino at info, or silent); console in a worker-only process. */
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  /** Work done in the transaction that resolves a task, in this order (webhook deliveries, upstream cancels). */
  resolutionHooks: readonly ResolutionHook[];
  /** Work done right after a new task's acceptance commits (alerts), in this order. */
  acceptedHooks: readonly AcceptedHook[];
  /** Crash fault points (tests only): every point a no-op unless Config.faultPoints arms it. */
  faults: FaultPoints;
  /** Tells workers that new work is due now. */
  wakeWorkers(): void;
  /** The worker's slots while requests arrive on the same event loop (runtime/worker/api-first.ts). */
  apiFirst: ApiFirst;
  /** Keep-alive connections of webhook deliveries, each checked at connect time; closed with the service. */
  outbound: OutboundAgents;
  /** Customers buying credits (runtime/payments/); undefined when payments are off. */
  payments: Payments | undefined;
}
