import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** A transaction: functions that must run inside one (ledger changes, terminal writes) ask for this. */
export type Trx = Transaction<Database>;

/** The database or a transaction: reads and single statements that may run either way. */
export type Executor = Kysely<Database> | Trx;
