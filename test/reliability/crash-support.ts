import type { Kysely, Selectable } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../../runtime/storage/schema.js';
import type { Db } from '../../runtime/storage/dialect.js';
import { isTerminal } from '../../runtime/tasks/states.js';
import { readConsistently } from '../support/consistent-read.js';
import { verifyCallback, type Received } from '../webhooks/support.js';

/**
 * What crash.test.ts needs besides the scenario itself: the fault points it arms, a snapshot of
 * one account's rows, and the audit of what the loopback receiver saw against the delivery rows.
 */

export interface FaultCase {
  /** The name passed in MEDIAFORGE_FAULT_POINTS (runtime/faults.ts). */
  point: string;
  phase: 'create' | 'run' | 'deliver';
  /** The point is inside a transaction: the crash must leave no trace of it. */
  rollsBack?: boolean;
}

/** Every fault point placed in the runtime, in the order a task meets them. */
export const FAULT_CASES: FaultCase[] = [
  { point: 'create.idempotency-row', phase: 'create', rollsBack: true },
  { point: 'create.hold', phase: 'create', rollsBack: true },
  { point: 'create.task-row', phase: 'create', rollsBack: true },
  { point: 'create.work-items', phase: 'create', rollsBack: true },
  { point: 'create.committed', phase: 'create' },
  { point: 'worker.claimed', phase: 'run' },
  { point: 'run.started', phase: 'run' },
  { point: 'run.running', phase: 'run' },
  { point: 'worker.handled', phase: 'run' },
  { point: 'poll.answered', phase: 'run' },
  { point: 'poll.stored', phase: 'run' },
  { point: 'resolve.state-written', phase: 'run', rollsBack: true },
  { point: 'resolve.committed', phase: 'run' },
  { point: 'deliver.claimed', phase: 'deliver' },
  { point: 'deliver.sent', phase: 'deliver' },
  { point: 'deliver.recorded', phase: 'deliver' },
  // The third attempt sent: earlier deliveries are recorded as delivered and must not be sent again.
  { point: 'deliver.sent@3', phase: 'deliver' },
];

type Row<T extends keyof Database> = Selectable<Database[T]>;

/** One account's rows at one moment (the database of a scenario holds that account alone). */
export interface Snapshot {
  wallet: Row<'wallets'>;
  tasks: Row<'tasks'>[];
  holds: Row<'holds'>[];
  ledger: Row<'ledger_entries'>[];
  keys: Row<'idempotency_keys'>[];
  deliveries: Row<'webhook_deliveries'>[];
  /** Work items naming a task (the scenario's database has no other account). */
  work: Row<'work_items'>[];
}

/** Every table as of one moment (a resolution may commit between two separate reads). */
export async function snapshot(db: Db, accountId: string): Promise<Snapshot> {
  return readConsistently(db, (k) => readAll(k, accountId));
}

async function readAll(k: Kysely<Database>, accountId: string): Promise<Snapshot> {
  const tasks = await k
    .selectFrom('tasks')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .execute();
  return {
    wallet: await k.selectFrom('wallets').selectAll().where('account_id', '=', accountId).executeTakeFirstOrThrow(),
    tasks,
    holds: await k.selectFrom('holds').selectAll().where('account_id', '=', accountId).execute(),
    ledger: await k.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId).execute(),
    keys: await k.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).execute(),
    deliveries: await k.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', accountId).execute(),
    work: await k.selectFrom('work_items').selectAll().where('task_id', 'is not', null).execute(),
  };
}

/** Open work other than the retention purge (due in days): while there is some, the service is not done. */
export function openWork(s: Snapshot): Row<'work_items'>[] {
  return s.work.filter((w) => w.done_at === null && w.kind !== 'purge');
}

/** Every task terminal, every announcement out of `pending`, no work left but purges. */
export function isQuiet(s: Snapshot, tasks: number, deliveriesPerTask: number): boolean {
  return (
    s.tasks.length === tasks &&
    s.tasks.every((t) => isTerminal(t.state)) &&
    s.deliveries.length === tasks * deliveriesPerTask &&
    s.deliveries.every((d) => d.state !== 'pending') &&
    openWork(s).length === 0
  );
}

/**
 * The rows of every task: one hold, resolved once, the way the state says, the ledger rows
 * agreeing (one `hold`, one `settle` or `release`), one purge item per resolution and at most one
 * poll item (a second one polls the deployment twice, and two final answers race: the losing
 * resolution deletes the media of the winning one, stored under the same keys). Returns what is wrong.
 */
export function checkTaskRows(s: Snapshot): string[] {
  const problems: string[] = [];
  // Nothing outlives the transaction that should have written it with its task.
  const taskIds = new Set(s.tasks.map((t) => t.id));
  for (const orphan of [
    ...s.holds,
    ...s.ledger.filter((e) => e.task_id !== null),
    ...s.keys,
    ...s.work,
    ...s.deliveries,
  ].filter((row) => !taskIds.has(row.task_id!))) {
    problems.push(`a row names no task: ${JSON.stringify(orphan).slice(0, 200)}`);
  }
  for (const task of s.tasks) {
    const holds = s.holds.filter((h) => h.task_id === task.id);
    const rows = (kind: string) => s.ledger.filter((e) => e.task_id === task.id && e.kind === kind);
    if (holds.length !== 1 || rows('hold').length !== 1) {
      problems.push(`${task.id}: ${holds.length} holds, ${rows('hold').length} hold rows`);
      continue;
    }
    const [hold] = holds;
    const settles = rows('settle');
    const releases = rows('release');
    if (task.state === 'succeeded') {
      if (hold.state !== 'settled' || settles.length !== 1 || releases.length !== 0)
        problems.push(
          `${task.id} succeeded: hold ${hold.state}, ${settles.length} settle, ${releases.length} release rows`,
        );
      else if (
        hold.charged !== task.charged_credits ||
        settles[0].amount !== hold.charged ||
        hold.charged! > hold.amount
      )
        problems.push(
          `${task.id}: charged ${task.charged_credits}, hold ${hold.charged}/${hold.amount}, settle row ${settles[0].amount}`,
        );
    } else if (isTerminal(task.state)) {
      if (hold.state !== 'released' || releases.length !== 1 || settles.length !== 0)
        problems.push(
          `${task.id} ${task.state}: hold ${hold.state}, ${settles.length} settle, ${releases.length} release rows`,
        );
    } else if (hold.state !== 'held' || settles.length + releases.length !== 0)
      problems.push(`${task.id} ${task.state}: hold ${hold.state} before the task ended`);
    const items = (kind: string) => s.work.filter((w) => w.task_id === task.id && w.kind === kind).length;
    if (isTerminal(task.state) && items('purge') !== 1)
      problems.push(`${task.id}: ${items('purge')} purge items (one per resolution)`);
    if (items('poll') > 1) problems.push(`${task.id}: ${items('poll')} poll items (one deployment job polled twice)`);
  }
  return problems;
}

export interface DeliveryAudit {
  /** Requests beyond the recorded attempts: an attempt the crash cut off between send and record, made again. */
  duplicates: number;
  problems: string[];
}

/**
 * What the receiver saw against the delivery rows. For each delivery, with `rec0` the attempts
 * recorded when the process died, `pre` and `post` the requests received before and after the
 * restart, and `attempts` the final count:
 * - every request names a known delivery, carries its exact body and a valid signature;
 * - pre - rec0 is 0 or 1: a recorded attempt the receiver never saw would be a lost attempt, and
 *   one process has at most one attempt of a delivery in flight. It may be 1 only for a delivery
 *   still pending at the crash: the process died between the receiver's answer and recording it
 *   (whichever fault point killed it: another task's point can hit while a delivery is in flight);
 * - post = attempts - rec0: every attempt after the restart is recorded, none is made twice;
 * - a delivery recorded as delivered before the crash is never sent again (post = 0).
 * So the requests of a delivery number its recorded attempts plus at most one, and the one
 * extra is exactly a request whose 2xx the dead process never recorded.
 */
export function auditDeliveries(input: {
  requests: Received[];
  /** How many of `requests` arrived before the restarted process started. */
  preCount: number;
  atCrash: Row<'webhook_deliveries'>[];
  final: Row<'webhook_deliveries'>[];
  callbackSecret: string;
  endpointSecret: string;
}): DeliveryAudit {
  const problems: string[] = [];
  const byId = new Map(input.final.map((d) => [d.id, d]));
  const seen = new Map<string, { pre: number; post: number }>();
  for (const [index, request] of input.requests.entries()) {
    const id = deliveryIdOf(request);
    const row = id === undefined ? undefined : byId.get(id);
    if (!row) {
      problems.push(`request ${index} names no known delivery (${id})`);
      continue;
    }
    if (request.body !== row.body) problems.push(`${id}: body differs from the one built at resolution`);
    if (!signatureVerifies(request, row.kind, input)) problems.push(`${id}: signature does not verify`);
    const counts = seen.get(id!) ?? { pre: 0, post: 0 };
    if (index < input.preCount) counts.pre++;
    else counts.post++;
    seen.set(id!, counts);
  }
  let duplicates = 0;
  for (const row of input.final) {
    const { pre, post } = seen.get(row.id) ?? { pre: 0, post: 0 };
    const before = input.atCrash.find((d) => d.id === row.id);
    const rec0 = before?.attempts ?? 0;
    const cut = pre - rec0;
    if (row.state !== 'delivered' || pre + post === 0)
      problems.push(`${row.id}: ${row.state} after ${pre + post} requests`);
    if (cut < 0)
      problems.push(`${row.id}: ${rec0} attempts recorded before the crash, ${pre} received (an attempt lost)`);
    if (cut > 1) problems.push(`${row.id}: ${cut} unrecorded attempts before the crash`);
    if (cut === 1 && before?.state !== 'pending')
      problems.push(`${row.id}: an unrecorded attempt, though it was ${before?.state ?? 'not written'} at the crash`);
    if (post !== row.attempts - rec0)
      problems.push(`${row.id}: ${post} requests after the restart, ${row.attempts - rec0} attempts recorded`);
    if (before?.state === 'delivered' && post > 0)
      problems.push(`${row.id}: sent again after it was recorded as delivered`);
    duplicates += pre + post - row.attempts;
  }
  return { duplicates, problems };
}

/** The delivery id: `webhook-id` for account endpoints, the body's `request_id` for task callbacks. */
function deliveryIdOf(request: Received): string | undefined {
  const header = request.headers['webhook-id'];
  if (typeof header === 'string') return header;
  try {
    return (JSON.parse(request.body) as { request_id?: string }).request_id;
  } catch {
    return undefined;
  }
}

function signatureVerifies(
  request: Received,
  kind: string,
  secrets: { callbackSecret: string; endpointSecret: string },
): boolean {
  if (kind === 'callback') return verifyCallback(secrets.callbackSecret, request.headers, request.body);
  try {
    new Webhook(secrets.endpointSecret).verify(request.body, request.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}
