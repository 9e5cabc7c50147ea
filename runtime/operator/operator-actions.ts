import { randomUUID } from 'node:crypto';
import {
  accountOfKey,
  addCreditsIn,
  createKeyIn,
  keyPolicyOf,
  revokeKeyIn,
  setKeyPolicyIn,
} from '../accounts/accounts.js';
import {
  applyPolicyInput,
  hasPolicy,
  type KeyPolicy,
  type KeyPolicyInput,
  policyView,
  samePolicy,
} from '../accounts/key-policy.js';
import { setUserRole, type UserRole } from '../accounts/users.js';
import { type AuditAction, type AuditActor, recordAudit } from '../audit/audit-log.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Db } from '../storage/dialect.js';

/** Who acts and from where: the console's operator (user id, client address) or the CLI (`cli`, no address). */
export interface ActingOperator {
  actor: AuditActor;
  clientAddress: string | null;
}

export const CLI_OPERATOR: ActingOperator = { actor: 'cli', clientAddress: null };

/**
 * The audit row of a CLI operator action whose statements open their own transactions (accounts,
 * keys, webhooks, characters): written once the action succeeded, actor `cli`. The details are what
 * the command was given, never a key or secret it made.
 */
export async function recordCliAction(
  db: Db,
  action: AuditAction,
  target: string | null,
  details: Record<string, unknown>,
  now: number,
): Promise<void> {
  await db.kysely
    .transaction()
    .execute((trx) =>
      recordAudit(
        trx,
        { actor: CLI_OPERATOR.actor, action, target, clientAddress: CLI_OPERATOR.clientAddress, details },
        now,
      ),
    );
}

/**
 * Adds credits to an account through the ledger's one top-up path, its row carrying the note and
 * the operator, and the audit row in the same transaction. With an idempotency key (the console's
 * form sends one per form; `credits add --idempotency-key`) a second request with it adds nothing,
 * writes no audit row and answers the first grant (`replayed`). Undefined (nothing written) for an
 * unknown account.
 */
export async function grantCredits(
  db: Db,
  ledger: Ledger,
  by: ActingOperator,
  grant: { accountId: string; credits: number; note: string | null; idempotencyKey?: string | null },
  now: number,
): Promise<{ added: number; replayed: boolean } | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    if (!(await ledger.hasWallet(trx, grant.accountId))) return undefined;
    const applied = await addCreditsIn(ledger, trx, grant.accountId, grant.credits, now, {
      note: grant.note,
      byUserId: by.actor === CLI_OPERATOR.actor ? null : by.actor,
      reference: grant.idempotencyKey ? `grant:${grant.idempotencyKey}` : null,
    });
    if (applied.replayed) return applied;
    await recordAudit(
      trx,
      {
        actor: by.actor,
        action: 'credits.add',
        target: grant.accountId,
        clientAddress: by.clientAddress,
        details: { credits: grant.credits, note: grant.note },
      },
      now,
    );
    return applied;
  });
}

/**
 * An operator forgives everything an account owes (a refund or dispute took back more than was
 * available): one `debt_forgiven` ledger row and its audit row; createTask is open again. With an
 * idempotency key a second request forgives nothing more and says `replayed`; undefined for an
 * unknown account. Forgiving an account that owes nothing writes nothing.
 */
export async function forgiveDebtAsOperator(
  db: Db,
  ledger: Ledger,
  by: ActingOperator,
  forgiving: { accountId: string; note: string | null; idempotencyKey?: string | null },
  now: number,
): Promise<{ forgiven: number; replayed: boolean } | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    if (!(await ledger.hasWallet(trx, forgiving.accountId))) return undefined;
    const done = await ledger.forgiveDebt(trx, forgiving.accountId, now, {
      reference: `forgive:${forgiving.idempotencyKey ?? randomUUID()}`,
      byUserId: by.actor === CLI_OPERATOR.actor ? null : by.actor,
      note: forgiving.note,
    });
    if (done.replayed || done.forgiven === 0) return done;
    await recordAudit(
      trx,
      {
        actor: by.actor,
        action: 'debt.forgive',
        target: forgiving.accountId,
        clientAddress: by.clientAddress,
        details: { forgiven: done.forgiven, note: forgiving.note },
      },
      now,
    );
    return done;
  });
}

/** Revokes any account's key with its audit row; undefined for an unknown key, false when it was revoked already (nothing written). */
export async function revokeKeyAsOperator(
  db: Db,
  by: ActingOperator,
  keyId: string,
  now: number,
): Promise<boolean | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    const accountId = await accountOfKey(trx, keyId);
    if (accountId === undefined) return undefined;
    if (!(await revokeKeyIn(db, trx, keyId, now))) return false;
    await recordAudit(
      trx,
      { actor: by.actor, action: 'key.revoke', target: keyId, clientAddress: by.clientAddress, details: { accountId } },
      now,
    );
    return true;
  });
}

/**
 * Grants or takes back the operator role (`mediaforge users promote|demote`), recorded when it
 * changes anything. Undefined for an unknown email; else whether the role changed.
 */
export async function setRole(
  db: Db,
  by: ActingOperator,
  email: string,
  role: UserRole,
  now: number,
): Promise<{ userId: string; changed: boolean } | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    const before = await setUserRole(trx, email, role);
    if (!before) return undefined;
    const changed = before.role !== role;
    if (changed)
      await recordAudit(
        trx,
        {
          actor: by.actor,
          action: role === 'operator' ? 'user.promote' : 'user.demote',
          target: before.id,
          clientAddress: by.clientAddress,
          details: { email: before.email, from: before.role, to: role },
        },
        now,
      );
    return { userId: before.id, changed };
  });
}

/**
 * Makes a key (`mediaforge keys create`, the console's keys page) with its policy, already checked
 * by applyPolicyInput, and its `key.create` audit row (the account, workspace and policy; never the
 * secret) in one transaction. The CLI records every key it makes; the console records the keys made
 * with a policy (`auditPlainKey` false): an owner's plain key was never an audited change.
 */
export async function createKeyAsActor(
  db: Db,
  by: ActingOperator,
  key: { accountId: string; workspace: string; policy: KeyPolicy },
  now: number,
  options: { auditPlainKey: boolean } = { auditPlainKey: true },
): Promise<{ apiKey: string; keyId: string }> {
  return db.kysely.transaction().execute(async (trx) => {
    const created = await createKeyIn(trx, key.accountId, key.workspace, now, key.policy);
    const withPolicy = hasPolicy(key.policy);
    if (withPolicy || options.auditPlainKey)
      await recordAudit(
        trx,
        {
          actor: by.actor,
          action: 'key.create',
          target: created.keyId,
          clientAddress: by.clientAddress,
          details: {
            accountId: key.accountId,
            workspace: key.workspace,
            // The policy the key was made with, when it has one.
            ...(withPolicy ? { policy: policyView(key.policy) } : {}),
          },
        },
        now,
      );
    return created;
  });
}

/**
 * Changes a key's policy (`mediaforge keys set`, the console's keys page) and records it, the policy
 * before and after in the audit row, in one transaction. Undefined for an unknown key (or one of
 * another account than `ofAccount`, when given: an owner edits only the keys of their account).
 * Throws KeyPolicyInputError for a bad policy, nothing changed. A change that changes nothing
 * writes nothing, audit row included.
 */
export async function setKeyPolicyAsActor(
  db: Db,
  by: ActingOperator,
  keyId: string,
  input: KeyPolicyInput,
  now: number,
  ofAccount?: string,
): Promise<KeyPolicy | undefined> {
  return db.kysely.transaction().execute(async (trx) => {
    const current = await keyPolicyOf(trx, keyId);
    if (!current || (ofAccount !== undefined && current.accountId !== ofAccount)) return undefined;
    const next = applyPolicyInput(current.policy, input, now);
    // Nothing changes (an empty body, or the parts the key has already): nothing written, no audit row.
    if (samePolicy(current.policy, next)) return current.policy;
    await setKeyPolicyIn(db, trx, keyId, next);
    await recordAudit(
      trx,
      {
        actor: by.actor,
        action: 'key.policy',
        target: keyId,
        clientAddress: by.clientAddress,
        details: { accountId: current.accountId, before: policyView(current.policy), after: policyView(next) },
      },
      now,
    );
    return next;
  });
}
