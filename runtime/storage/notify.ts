import { sql } from 'kysely';
import type { Db } from './dialect.js';
import { NotifyBatches } from './notify-batches.js';

const WORK_CHANNEL = 'mediaforge_work';
const TASK_CHANNEL = 'mediaforge_task';

/**
 * Wake-ups across processes. On PostgreSQL: NOTIFY when work is due now or a task resolved, and
 * one LISTEN connection per process that wakes its worker and its held waits. On SQLite (one
 * process) there is nobody else to tell, and the in-process calls already happened.
 *
 * Telling (`notifier`) and listening (`listenForNotifications`) are apart: what tells others is
 * built first and handed to the parts that resolve tasks (TaskEvents), what listens is started
 * once those parts exist, so nothing is patched in after construction.
 */
export interface Notifier {
  workDue(): Promise<void>;
  taskResolved(taskId: string): Promise<void>;
}

export interface NotifyHandlers {
  onWorkDue(): void;
  onTaskResolved(taskId: string): void;
  onError(error: unknown): void;
}

export interface Listener {
  close(): Promise<void>;
}

/**
 * Tells the other processes (PostgreSQL NOTIFY over the service's own pool); on SQLite, nothing.
 * One NOTIFY statement at a time, what was told meanwhile as the rows of the next (notify-batches.ts):
 * under load one round trip for many tasks, where each took its own.
 */
export function notifier(db: Db): Notifier {
  if (db.engine !== 'postgres') return { workDue: async () => {}, taskResolved: async () => {} };
  const batches = new NotifyBatches(async (notices) => {
    await sql`SELECT pg_notify(n.channel, n.payload)
      FROM unnest(${notices.map((n) => n.channel)}::text[], ${notices.map((n) => n.payload)}::text[]) AS n(channel, payload)`.execute(
      db.kysely,
    );
  });
  return {
    workDue: () => batches.tell(WORK_CHANNEL, ''),
    taskResolved: (taskId: string) => batches.tell(TASK_CHANNEL, taskId),
  };
}

/** Listens to the other processes on a connection of its own (PostgreSQL LISTEN); on SQLite, nothing. */
export async function listenForNotifications(db: Db, handlers: NotifyHandlers): Promise<Listener> {
  if (db.engine !== 'postgres') return { close: async () => {} };
  const pg = (await import('pg')).default;
  let client: InstanceType<typeof pg.Client> | undefined;
  let closed = false;
  const listen = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: db.url });
    next.on('notification', (message) => {
      if (message.channel === WORK_CHANNEL) handlers.onWorkDue();
      else if (message.channel === TASK_CHANNEL && message.payload) handlers.onTaskResolved(message.payload);
    });
    // A dropped LISTEN connection is re-opened; the workers' short poll covers the gap.
    next.on('error', (error) => {
      handlers.onError(error);
      if (!closed) setTimeout(() => listen().catch(handlers.onError), 1000);
    });
    await next.connect();
    await next.query(`LISTEN ${WORK_CHANNEL}; LISTEN ${TASK_CHANNEL}`);
    client = next;
  };
  await listen();
  return {
    async close() {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}
