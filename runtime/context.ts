import type { FastifyBaseLogger } from 'fastify';
import type { BlobStore } from './blobs/blob-store.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Deployments } from './deployments/deployment.js';
import type { Db } from './storage/dialect.js';
import type { TaskEvents } from './tasks/task-events.js';

/** What every part of the runtime is handed: one database, one clock, one secret. */
export interface Context {
  config: Config;
  db: Db;
  clock: Clock;
  secret: string;
  deployments: Deployments;
  blobs: BlobStore;
  events: TaskEvents;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  /** Tells workers that new work is due now. */
  wakeWorkers(): void;
}
