import type { Handlers } from '../../../generated/console/routes.js';
import { auditEntries } from '../../audit/audit-log.js';
import { consoleRefusal } from '../../console-refusal.js';
import { DEFAULT_BOOK, parsePriceBook, setAccountPriceBook } from '../../accounts/price-book.js';
import { ApiError } from '../../errors.js';
import { accountDetail, findAccounts, findUsers } from '../../operator/account-directory.js';
import {
  type ActingOperator,
  forgiveDebtAsOperator,
  grantCredits,
  revokeKeyAsOperator,
  setKeyPolicyAsActor,
} from '../../operator/operator-actions.js';
import { asKeyPolicyRefusal } from '../../accounts/key-policy-refusal.js';
import { policyView } from '../../accounts/key-policy.js';
import { marginByBook, marginReport } from '../../routing/margin.js';
import { deploymentsStatus } from '../../routing/status.js';
import type { ApiRequest, ConsoleRequests } from '../api-request.js';

type OperatorOperation =
  | 'operatorDeployments'
  | 'operatorMargin'
  | 'operatorAccounts'
  | 'operatorAccount'
  | 'operatorAddCredits'
  | 'operatorForgiveDebt'
  | 'operatorSetPriceBook'
  | 'operatorRevokeKey'
  | 'operatorSetKeyPolicy'
  | 'operatorUsers'
  | 'operatorAudit';

const AUDIT_PAGE = 100;
const ok = <T>(data: T) => ({ status: 200, data });

/** The operator as the audit log records them: their user id and the client address of the request. */
function acting(req: ApiRequest): ActingOperator {
  return { actor: req.user.userId, clientAddress: req.raw.ip };
}

/**
 * The operator console's operations (generated/console/routes.ts, security operatorSession): the
 * session authenticator has refused anyone without the role before these run
 * (runtime/http/session-auth.ts). Reads come from the modules the CLI reads; changes go through
 * runtime/operator/operator-actions.ts, each with its audit row in the same transaction.
 */
export const operatorHandlers: Pick<Handlers<ConsoleRequests>, OperatorOperation> = {
  async operatorDeployments(req) {
    const status = await deploymentsStatus(req.ctx.db, req.ctx.deployments, req.ctx.clock.now());
    // The contract's fields, named one by one: what routing/status.ts adds later is not answered until the contract says so.
    return ok(
      status.map((d) => ({
        name: d.name,
        kind: d.kind,
        state: d.state,
        inFlight: d.inFlight,
        maxInFlight: d.maxInFlight,
        maxInFlightPerAccount: d.maxInFlightPerAccount,
        consecutiveFailures: d.consecutiveFailures,
        coolingUntil: d.coolingUntil,
        lastFailure: d.lastFailure,
        lastFailureAt: d.lastFailureAt,
        submits: d.submits,
        polls: d.polls,
        failures: { ...d.failures },
      })),
    );
  },

  async operatorMargin(req) {
    const since = req.query.since === undefined ? undefined : Date.parse(`${req.query.since}T00:00:00Z`);
    // `report margin`'s two computations, whole: per model and deployment, then per book.
    const [report, byBook] = await Promise.all([
      marginReport(req.ctx.db.kysely, since),
      marginByBook(req.ctx.db.kysely, since),
    ]);
    return ok({ ...report, ...byBook });
  },

  async operatorAccounts(req) {
    return ok(await findAccounts(req.ctx.db, req.query.q));
  },

  async operatorAccount(req) {
    const detail = await accountDetail(req.ctx.db, req.params.accountId, req.ctx.clock.now());
    if (!detail) throw consoleRefusal('not_found', 'no such account');
    return ok(detail);
  },

  async operatorAddCredits(req) {
    const { accountId } = req.params;
    const { credits, note, idempotencyKey } = req.body;
    const granted = await grantCredits(
      req.ctx.db,
      req.ctx.ledger,
      acting(req),
      { accountId, credits, note: note.trim(), idempotencyKey: idempotencyKey ?? null },
      req.ctx.clock.now(),
    );
    if (!granted) throw consoleRefusal('not_found', 'no such account');
    const { available, held, spent, purchased } = await req.ctx.ledger.balance(req.ctx.db, accountId);
    return ok({
      accountId,
      added: granted.added,
      replayed: granted.replayed,
      balance: { available, held, spent, purchased },
    });
  },

  async operatorForgiveDebt(req) {
    const { accountId } = req.params;
    const { note, idempotencyKey } = req.body;
    const done = await forgiveDebtAsOperator(
      req.ctx.db,
      req.ctx.ledger,
      acting(req),
      { accountId, note: note.trim(), idempotencyKey: idempotencyKey ?? null },
      req.ctx.clock.now(),
    );
    if (!done) throw consoleRefusal('not_found', 'no such account');
    const { available, held, spent, purchased, owed, reversed } = await req.ctx.ledger.balance(req.ctx.db, accountId);
    return ok({
      accountId,
      forgiven: done.forgiven,
      replayed: done.replayed,
      balance: { available, held, spent, purchased, owed, reversed },
    });
  },

  // The CLI's path (accounts set --price-book): the same parse, the same change and audit row.
  async operatorSetPriceBook(req) {
    const { accountId } = req.params;
    const book = parsePriceBook(req.body.book);
    // The envelope with its business code and the field, as for any bad input (not a console_ refusal, which has neither).
    if (book === undefined) throw new ApiError('unknown_price_book', { param: 'book' });
    const changed = await setAccountPriceBook(req.ctx.db, acting(req), accountId, book, req.ctx.clock.now());
    if (!changed) throw consoleRefusal('not_found', 'no such account');
    return ok({ accountId, priceBook: changed.to ?? DEFAULT_BOOK, previous: changed.from ?? DEFAULT_BOOK });
  },

  async operatorRevokeKey(req) {
    const revoked = await revokeKeyAsOperator(req.ctx.db, acting(req), req.params.keyId, req.ctx.clock.now());
    if (revoked === undefined) throw consoleRefusal('not_found', 'no such key');
    return ok({ revoked });
  },

  /**
   * Any account's key policy, through the owner's and the CLI's one path (setKeyPolicyAsActor):
   * the audit row names the operator; an unknown key is the revocation's 404.
   */
  async operatorSetKeyPolicy(req) {
    const { keyId } = req.params;
    const policy = await setKeyPolicyAsActor(req.ctx.db, acting(req), keyId, req.body, req.ctx.clock.now()).catch(
      (error: unknown) => {
        throw asKeyPolicyRefusal(error);
      },
    );
    if (!policy) throw consoleRefusal('not_found', 'no such key');
    return ok({ keyId, policy: policyView(policy) });
  },

  async operatorUsers(req) {
    return ok(await findUsers(req.ctx.db, req.query.q));
  },

  async operatorAudit(req) {
    return ok(await auditEntries(req.ctx.db.kysely, AUDIT_PAGE));
  },
};
