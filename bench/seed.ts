/**
 * A SQLite database holding many finished tasks of one account and one key, written with direct
 * inserts while no service runs (bench/growth.ts). Each task is shaped the way the service leaves
 * a task that succeeded: the task row (succeeded, settled, output stored), its hold (settled), its
 * ledger rows (hold, settle), its Idempotency-Key row (still inside its 24 hours), and its work
 * items (run, poll and expire done; purge pending, due when the retention runs out). The tasks are
 * spread over the last day, the busiest shape: every key row and every purge item still live.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { createAccount, type CreatedAccount } from '../runtime/accounts/accounts.js';
import { openDb } from '../runtime/storage/dialect.js';
import { migrateToLatest } from '../runtime/storage/migrate.js';
import { MODEL, PLENTY_OF_CREDITS, TYPICAL_INPUT } from './support.js';

const require = createRequire(import.meta.url);
const Sqlite = require('better-sqlite3') as typeof import('better-sqlite3');

/** Rows per transaction: large enough that commits do not count, small enough to keep memory flat. */
const BATCH = 50_000;
const DAY_MS = 24 * 3600 * 1000;
const RETENTION_MS = 30 * DAY_MS;
const MAX_CREDITS = 191;
const CHARGED = 176;

export interface Seeded {
  account: CreatedAccount;
  keyId: string;
  tasks: number;
  seconds: number;
}

/**
 * Task ids as the service makes them (newOrderedId: prefix, the creation time in 9 base-36 digits,
 * 9 random bytes as base64url), with the random part reproducible and fast.
 */
function taskIdOf(i: number, salt: string, createdAt: number): string {
  const random = createHash('sha1').update(`${salt}:${i}`).digest('base64url').slice(0, 12);
  return `task_${createdAt.toString(36).padStart(9, '0')}${random}`;
}

/** Migrates a fresh SQLite file at `path`, adds one account, then `count` finished tasks of its key. */
export async function seedFinishedTasks(path: string, count: number): Promise<Seeded> {
  const t0 = performance.now();
  const db = await openDb(`sqlite:${path}`);
  let account: CreatedAccount;
  try {
    await migrateToLatest(db);
    account = await createAccount(db, { credits: PLENTY_OF_CREDITS, now: Date.now() });
  } finally {
    await db.close();
  }
  const sqlite = new Sqlite(path);
  try {
    // Nobody else reads this file while it is written, and a crash only loses a bench database.
    // The rollback journal in memory: no WAL to write and checkpoint (better-sqlite3 refuses OFF).
    sqlite.pragma('journal_mode = MEMORY');
    sqlite.pragma('synchronous = OFF');
    sqlite.pragma('cache_size = -262144');
    const { id: keyId } = sqlite.prepare('SELECT id FROM api_keys WHERE account_id = ?').get(account.accountId) as {
      id: string;
    };
    insertTasks(sqlite, account.accountId, keyId, count);
    sqlite.pragma('journal_mode = WAL');
    return { account, keyId, tasks: count, seconds: (performance.now() - t0) / 1000 };
  } finally {
    sqlite.close();
  }
}

function insertTasks(sqlite: import('better-sqlite3').Database, accountId: string, keyId: string, count: number) {
  const insertTask = sqlite.prepare(
    `INSERT INTO tasks (id, account_id, api_key_id, model, state, input_json, callback_url, request_id, progress,
       estimated_credits, max_credits, charged_credits, settled, error_code, error_message, output_json, warnings_json,
       deployment, deployment_handle, retry_of, retention_seconds, created_at, updated_at, started_at, finished_at,
       deadline_at, purged_at, upstream_cost_micros)
     VALUES (?, ?, ?, ?, 'succeeded', ?, NULL, ?, 100, ?, ?, ?, 1, NULL, NULL, ?, '[]', 'simulator', ?, NULL, NULL,
       ?, ?, ?, ?, ?, NULL, NULL)`,
  );
  const insertHold = sqlite.prepare(
    `INSERT INTO holds (task_id, account_id, amount, state, charged, created_at, resolved_at) VALUES (?, ?, ?, 'settled', ?, ?, ?)`,
  );
  const insertLedger = sqlite.prepare(
    'INSERT INTO ledger_entries (account_id, task_id, kind, amount, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const insertKey = sqlite.prepare(
    `INSERT INTO idempotency_keys (account_id, scope, key, api_key_id, fingerprint, task_id, created_at, expires_at)
     VALUES (?, 'create', ?, ?, ?, ?, ?, ?)`,
  );
  const insertWork = sqlite.prepare(
    `INSERT INTO work_items (kind, task_id, ref_id, due_at, lease_owner, lease_until, attempts, done_at, created_at)
     VALUES (?, ?, NULL, ?, NULL, NULL, 1, ?, ?)`,
  );
  const settleWallet = sqlite.prepare(
    'UPDATE wallets SET available = available - ?, spent = spent + ? WHERE account_id = ?',
  );
  const inputJson = JSON.stringify(TYPICAL_INPUT);
  const fingerprint = createHash('sha256').update(inputJson).digest('hex');
  const salt = `${accountId}`;
  // Oldest first, one day ago to a few seconds ago, in creation order (as the service writes them).
  const end = Date.now() - 10_000;
  const start = end - DAY_MS;
  const step = DAY_MS / Math.max(1, count);
  const batch = sqlite.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const created = Math.floor(start + i * step);
      const id = taskIdOf(i, salt, created);
      const started = created + 5;
      const finished = created + 3000;
      const output = JSON.stringify([{ key: `tasks/${id}/output.mp4`, mime: 'video/mp4', durationSeconds: 8 }]);
      insertTask.run(
        id,
        accountId,
        keyId,
        MODEL,
        inputJson,
        `req_${id.slice(5)}`,
        CHARGED,
        MAX_CREDITS,
        CHARGED,
        output,
        `sim_${id.slice(5)}`,
        created,
        finished,
        started,
        finished,
        created + 1800_000,
      );
      insertHold.run(id, accountId, MAX_CREDITS, CHARGED, created, finished);
      insertLedger.run(accountId, id, 'hold', MAX_CREDITS, created);
      insertLedger.run(accountId, id, 'settle', CHARGED, finished);
      insertKey.run(accountId, `seed-${i}`, keyId, fingerprint, id, created, created + DAY_MS);
      insertWork.run('run', id, created, started, created);
      insertWork.run('expire', id, created + 1800_000, finished, created);
      insertWork.run('poll', id, started + 2500, finished, started);
      insertWork.run('purge', id, finished + RETENTION_MS, null, finished);
    }
    settleWallet.run(CHARGED * (to - from), CHARGED * (to - from), accountId);
  });
  for (let from = 0; from < count; from += BATCH) batch(from, Math.min(count, from + BATCH));
}
