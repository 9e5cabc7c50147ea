import { sql } from 'kysely';
import type { Db } from './dialect.js';

const WORK_CHANNEL = 'mediaforge_work';
const TASK_CHANNEL = 'mediaforge_task';

/**
 * Wake-ups across processes. On PostgreSQL: NOTIFY when work is due now or a task resolved, and
 * one LISTEN connection per process that wakes its worker and its held waits. On SQLite (one
 * process) there is nobody else to tell, and the in-process calls already happened.
 */
export interface Notifier {
  workDue(): Promise<void>;
  taskResolved(taskId: string): Promise<void>;
  close(): Promise<void>;
}

export interface NotifyHandlers {
  onWorkDue(): void;
  onTaskResolved(taskId: string): void;
  onError(error: unknown): void;
}

export async function startNotifier(db: Db, handlers: NotifyHandlers): Promise<Notifier> {
  if (db.engine !== 'postgres') {
    return { workDue: async () => {}, taskResolved: async () => {}, close: async () => {} };
  }
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
    async workDue() {
      await sql`SELECT pg_notify(${WORK_CHANNEL}, '')`.execute(db.kysely);
    },
    async taskResolved(taskId: string) {
      await sql`SELECT pg_notify(${TASK_CHANNEL}, ${taskId})`.execute(db.kysely);
    },
    async close() {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}
