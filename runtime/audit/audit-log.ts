import { newOrderedId } from '../ids.js';
import type { Executor, Trx } from '../storage/executor.js';

/** `cli` for what the `mediaforge` command does on the machine; a user id for the console's operator. */
export type AuditActor = string;

/** What an operator did: each kind of action once, as the log and the console name it. */
export type AuditAction =
  | 'credits.add'
  | 'key.revoke'
  | 'user.promote'
  | 'user.demote'
  // The CLI's other operator actions (runtime/operator/operator-actions.ts recordCliAction).
  | 'account.create'
  | 'account.set'
  | 'key.create'
  // A key's policy set or changed (issue 40): the console's owner or operator, or the CLI.
  | 'key.policy'
  // An account's price book assigned or cleared by an operator (issue 40: spec/price-books/).
  | 'account.price_book'
  // A key's account-reports scope turned on or off (issue 39: statements, account-wide usage).
  | 'key.scope'
  // Every account's billed usage exported by the operator (issue 39: `mediaforge usage export`).
  | 'usage.export'
  // Paid Checkout Sessions looked for and credited by the operator (issue 39: `mediaforge payments reconcile`).
  | 'payments.reconcile'
  // What an account owed (a refund or dispute that found too little) forgiven by an operator (issue 39).
  | 'debt.forgive'
  | 'webhook.add'
  | 'webhook.disable'
  | 'webhook.enable'
  | 'webhook.delete'
  | 'webhook.rotate-secret'
  | 'webhook.resend'
  | 'entity.create'
  | 'entity.delete';

export interface AuditEntry {
  actor: AuditActor;
  action: AuditAction;
  /** What the action was done to: an account, key or user id. */
  target: string | null;
  /** The client address the console request came from; null from the CLI. */
  clientAddress: string | null;
  details: Record<string, unknown>;
}

/**
 * The audit log: one row per operator action, written in the action's own transaction (the
 * action and its record commit together or not at all). Kept like the ledger: no purge, no
 * retention and no maintenance job deletes from it (test/console/operator-audit.test.ts).
 */
export async function recordAudit(trx: Trx, entry: AuditEntry, now: number): Promise<string> {
  const id = newOrderedId('aud', now);
  await trx
    .insertInto('audit_log')
    .values({
      id,
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      client_address: entry.clientAddress,
      details: JSON.stringify(entry.details),
      created_at: now,
    })
    .execute();
  return id;
}

export interface AuditRecord extends AuditEntry {
  id: string;
  /** The actor's email when the actor is a user. */
  actorEmail: string | null;
  createdAt: string;
}

/** The latest entries, newest first. */
export async function auditEntries(db: Executor, limit: number): Promise<AuditRecord[]> {
  const rows = await db
    .selectFrom('audit_log')
    .leftJoin('users', 'users.id', 'audit_log.actor')
    .select([
      'audit_log.id',
      'audit_log.actor',
      'audit_log.action',
      'audit_log.target',
      'audit_log.client_address',
      'audit_log.details',
      'audit_log.created_at',
      'users.email',
    ])
    .orderBy('audit_log.created_at', 'desc')
    .orderBy('audit_log.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    actor: r.actor,
    actorEmail: r.email ?? null,
    action: r.action as AuditAction,
    target: r.target,
    clientAddress: r.client_address,
    details: JSON.parse(r.details) as Record<string, unknown>,
    createdAt: new Date(Number(r.created_at)).toISOString(),
  }));
}
