import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { DatabaseBlobStore, LocalBlobStore } from './blobs/blob-store.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import type { Context } from './context.js';
import { Deployments, type Deployment } from './deployments/deployment.js';
import { SimulatorDeployment } from './deployments/simulator.js';
import { buildApp } from './http/app.js';
import { settingsSecret } from './settings.js';
import { openDb, type Db } from './storage/dialect.js';
import { migrateToLatest, pendingMigrations } from './storage/migrate.js';
import { startNotifier } from './storage/notify.js';
import { TaskEvents } from './tasks/task-events.js';
import { maintenanceWorkHandlers, scheduleMaintenance } from './worker/maintenance.js';
import { taskWorkHandlers } from './worker/task-work.js';
import { webhookWorkHandlers } from './webhooks/index.js';
import { Worker, type WorkHandler } from './worker/worker.js';

export interface ServiceOptions {
  clock?: Clock;
  logger?: boolean;
  /** Apply pending migrations first (the embedded default does; PostgreSQL deployments run `mediaforge migrate`). */
  migrate?: boolean;
  deployments?: Deployment[];
  /** Extra work kinds (webhook deliveries, ...). */
  workHandlers?: Record<string, WorkHandler>;
}

export interface Service {
  ctx: Context;
  app?: FastifyInstance;
  worker?: Worker;
  close(): Promise<void>;
}

export async function openServiceDb(config: Config): Promise<Db> {
  if (config.dbUrl.startsWith('sqlite:') && !config.dbUrl.includes(':memory:')) {
    mkdirSync(dirname(resolve(config.dbUrl.slice('sqlite:'.length))), { recursive: true });
  }
  return openDb(config.dbUrl);
}

/** Opens the database, builds the context, and starts the HTTP app and/or the worker by role. */
export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const db = await openServiceDb(config);
  if (options.migrate) await migrateToLatest(db);
  const pending = await pendingMigrations(db);
  if (pending.length) {
    await db.close();
    throw new Error(`the database at ${config.dbUrl} is not migrated (pending: ${pending.join(', ')}); run: mediaforge migrate --db ${config.dbUrl}`);
  }
  const clock = options.clock ?? systemClock;
  let worker: Worker | undefined;
  const ctx: Context = {
    config,
    db,
    clock,
    secret: await settingsSecret(db, config.secret),
    deployments: new Deployments(
      options.deployments ?? [new SimulatorDeployment({ latencyMs: config.simulatorLatencyMs, failWhenPromptContains: config.simulatorFailWhenPromptContains, now: () => clock.now() })],
    ),
    blobs: config.blobStore === 'database' ? new DatabaseBlobStore(db.kysely, () => clock.now()) : new LocalBlobStore(resolve(join(config.dataDir, 'blobs'))),
    events: new TaskEvents(),
    log: console,
    wakeWorkers: () => {
      worker?.wake();
      notifier.workDue().catch((error) => ctx.log.error({ err: error }, 'notify failed'));
    },
  };
  // Other processes (PostgreSQL): their new work wakes this worker, their resolutions this process's waits.
  const notifier = await startNotifier(db, {
    onWorkDue: () => worker?.wake(),
    onTaskResolved: (taskId) => ctx.events.emitResolved(taskId),
    onError: (error) => ctx.log.warn({ err: error }, 'LISTEN connection lost; reconnecting'),
  });
  ctx.events.publish = (taskId) => {
    notifier.taskResolved(taskId).catch((error) => ctx.log.error({ err: error }, 'notify failed'));
  };
  if (config.role !== 'api') worker = new Worker(ctx, { ...taskWorkHandlers, ...maintenanceWorkHandlers, ...webhookWorkHandlers, ...options.workHandlers });
  if (worker) await scheduleMaintenance(ctx);
  const app = config.role !== 'worker' ? await buildApp(ctx, { logger: options.logger }) : undefined;
  if (app) ctx.log = app.log;
  return {
    ctx,
    app,
    worker,
    async close() {
      if (app) {
        // Node closes the idle keep-alive connections once, when close begins; one still busy then
        // stays open after its answer until its keep-alive timeout (72 s), and close waits for it.
        const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
        await app.close().finally(() => clearInterval(sweep));
      }
      await worker?.stop();
      await notifier.close();
      await db.close();
    },
  };
}
