import type { Db } from '../storage/dialect.js';
import type { Ledger } from './ledger.js';
import { postgresLedger } from './postgres.js';
import { sqliteLedger } from './sqlite.js';

/** The Ledger of the database's engine: chosen once, where the database is opened (service.ts, the CLI). */
export function ledgerFor(db: Pick<Db, 'engine'>): Ledger {
  return db.engine === 'postgres' ? postgresLedger : sqliteLedger;
}
