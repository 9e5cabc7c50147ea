import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { KeyRevision } from './accounts/key-revision.js';
import { openBlobStore } from './blobs/open-blob-store.js';
import { systemClock, type Clock } from './clock.js';
import { outboundPolicy, type Config } from './config.js';
import type { Context } from './context.js';
import { buildDeployments } from './routing/build.js';
import type { Deployment } from './deployments/deployment.js';
import { loadDeploymentsFile, type DeploymentsPlan } from './routing/deployments-file.js';
import { Deployments } from './routing/router.js';
import { recordServedPlan } from './routing/served-plan.js';
import { CallWindow } from './routing/call-window.js';
import { UpstreamStats } from './routing/upstream-stats.js';
import { FaultPoints } from './faults.js';
import { buildApp, createHttpServer } from './http/app.js';
import { trackConnections } from './http/connections.js';
import { settingsSecret } from './settings.js';
import { openServiceDb } from './storage/open-service-db.js';
import { checkpointOffThread } from './storage/sqlite-checkpoints.js';
import { ledgerFor } from './ledger/ledger-for.js';
import { migrateToLatest, pendingMigrations } from './storage/migrate.js';
import { listenForNotifications, notifier } from './storage/notify.js';
import type { AcceptedHook } from './tasks/acceptance.js';
import type { ResolutionHook } from './tasks/resolve-task.js';
import { TaskEvents } from './tasks/task-events.js';
import { maintenanceWorkHandlers, scheduleMaintenance } from './worker/maintenance.js';
import { taskWorkHandlers } from './worker/task-work.js';
import { upstreamCancelHook } from './worker/upstream-cancel.js';
import { reconcileHook } from './worker/reconcile.js';
import { webhookAcceptedHook, webhookResolutionHook, webhookWorkHandlers } from './webhooks/index.js';
import { OutboundAgents } from './net/kept-agents.js';
import { paymentSettings } from './payments/payment-settings.js';
import { Payments } from './payments/payments.js';
import type { AllWorkHandlers, WorkHandlers } from './queue/work-handler.js';
import { Worker } from './worker/worker.js';
import { ApiFirst } from './worker/api-first.js';

export interface ServiceOptions {
  clock?: Clock;
  logger?: boolean;
  /** Apply pending migrations first (the embedded default does; PostgreSQL deployments run `mediaforge migrate`). */
  migrate?: boolean;
  /** Deployments given directly (tests): every model routes to those that accept it, first first. */
  deployments?: Deployment[];
  /** The operator's deployments, already read; else config.deploymentsFile is read, else the simulator serves everything. */
  deploymentsPlan?: DeploymentsPlan;
  /** Extra work kinds (webhook deliveries, ...). */
  workHandlers?: WorkHandlers;
  /** What runs in the transaction that resolves a task, in order; default `defaultResolutionHooks`. */
  resolutionHooks?: readonly ResolutionHook[];
  /** What runs right after a task's acceptance commits; default `defaultAcceptedHooks`. */
  acceptedHooks?: readonly AcceptedHook[];
  /** What an armed fault point does when reached (Config.faultPoints); default: SIGKILL of this process. */
  onFaultPoint?: (name: string) => void;
}

/**
 * The resolution hooks of a complete service: an upstream job that may still run is cancelled
 * and reconciled, then the task's webhook deliveries are written (each in the resolving transaction).
 */
export const defaultResolutionHooks: readonly ResolutionHook[] = [
  upstreamCancelHook,
  reconcileHook,
  webhookResolutionHook,
];

/** After an acceptance: the alerts its hold may have crossed (webhooks/alerts.ts). */
export const defaultAcceptedHooks: readonly AcceptedHook[] = [webhookAcceptedHook];

export interface Service {
  ctx: Context;
  app?: FastifyInstance;
  worker?: Worker;
  close(): Promise<void>;
}

/** Opens the database, builds the context, and starts the HTTP app and/or the worker by role. */
export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const db = await openServiceDb(config.dbUrl);
  if (options.migrate) await migrateToLatest(db);
  const pending = await pendingMigrations(db);
  if (pending.length) {
    await db.close();
    throw new Error(
      `the database at ${config.dbUrl} is not migrated (pending: ${pending.join(', ')}); run: mediaforge migrate --db ${config.dbUrl}`,
    );
  }
  // The one choice of the ledger's statements: everything else receives it (ctx.ledger).
  const ledger = ledgerFor(db);
  const clock = options.clock ?? systemClock;
  let plan: DeploymentsPlan | undefined;
  try {
    plan =
      options.deploymentsPlan ??
      (config.deploymentsFile ? loadDeploymentsFile(config.deploymentsFile, config.environment) : undefined);
    // What `deployments status` reads when no file is named: the plan this service serves.
    if (!options.deployments) await recordServedPlan(db, plan);
  } catch (error) {
    await db.close();
    throw error;
  }
  // The media folder, when the service creates it, is its owner's only (as the database file).
  if (config.blobStore === 'local') mkdirSync(resolve(config.dataDir), { recursive: true, mode: 0o700 });
  // The HTTP server comes first: its logger is the service's (a worker-only process logs to the console).
  const app = config.role !== 'worker' ? createHttpServer(config, { logger: options.logger }) : undefined;
  const connections = app ? trackConnections(app.server) : undefined;
  const log: Context['log'] = app?.log ?? console;
  const tell = notifier(db);
  const deployments = options.deployments
    ? new Deployments(options.deployments)
    : buildDeployments(config, () => clock.now(), plan);
  let payments: Payments | undefined;
  try {
    const settings = paymentSettings(config);
    if (settings.on) {
      // stripe (some two hundred modules) loads only where payments are on.
      const { StripeProcessor } = await import('./payments/stripe-processor.js');
      payments = new Payments(settings, new StripeProcessor(settings), db, ledger);
    }
  } catch (error) {
    await db.close();
    throw error;
  }
  const ctx: Context = {
    config,
    db,
    ledger,
    clock,
    secret: await settingsSecret(db, config.secret),
    deployments,
    upstreamStats: new UpstreamStats(db),
    callWindow: new CallWindow(deployments.cooldown.windowMs),
    blobs: await openBlobStore(config, db, clock),
    // A resolution here is told to the other processes' waits (PostgreSQL NOTIFY).
    events: new TaskEvents((taskId) => {
      tell.taskResolved(taskId).catch((error) => log.error({ err: error }, 'notify failed'));
    }),
    keyRevision: new KeyRevision(db),
    log,
    resolutionHooks: options.resolutionHooks ?? defaultResolutionHooks,
    acceptedHooks: options.acceptedHooks ?? defaultAcceptedHooks,
    faults: new FaultPoints(config.faultPoints, options.onFaultPoint),
    wakeWorkers: () => {
      worker?.wake();
      tell.workDue().catch((error) => log.error({ err: error }, 'notify failed'));
    },
    outbound: new OutboundAgents(outboundPolicy(config)),
    payments,
    apiFirst: new ApiFirst(),
  };
  const worker =
    config.role !== 'api'
      ? new Worker(ctx, {
          ...({
            ...taskWorkHandlers,
            ...maintenanceWorkHandlers,
            ...webhookWorkHandlers,
          } satisfies AllWorkHandlers),
          ...options.workHandlers,
        })
      : undefined;
  // Other processes (PostgreSQL): their new work wakes this worker, their resolutions this process's waits.
  const listener = await listenForNotifications(db, {
    onWorkDue: () => worker?.wake(),
    onTaskResolved: (taskId) => ctx.events.emitResolved(taskId),
    onError: (error) => log.warn({ err: error }, 'LISTEN connection lost; reconnecting'),
  });
  if (worker) await scheduleMaintenance(ctx);
  if (app) await buildApp(ctx, app);
  const checkpoints = db.sqlite
    ? checkpointOffThread(db.sqlite, (error) => log.warn({ err: error }, 'the WAL checkpoint thread stopped'))
    : undefined;
  return {
    ctx,
    app,
    worker,
    async close() {
      if (app) {
        // Node closes the idle keep-alive connections once, when close begins; one still busy then
        // stays open after its answer until its keep-alive timeout (72 s), and close waits for it.
        const sweep = setInterval(() => connections?.closeIdle(), 100);
        await app.close().finally(() => clearInterval(sweep));
      }
      await worker?.stop();
      ctx.outbound.close();
      ctx.blobs.close?.();
      await ctx.upstreamStats.flush();
      ctx.deployments.close();
      await listener.close();
      await checkpoints?.stop();
      await db.close();
    },
  };
}
