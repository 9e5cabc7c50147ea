import type { Handlers } from '../../../generated/console/routes.js';
import { LANGUAGES } from '../../../generated/errors.js';
import { creditsToUsd } from '../../../generated/support.js';
import { isKeyOfAccount, revokeKey } from '../../accounts/accounts.js';
import { keysWithPolicy } from '../../accounts/key-policy-state.js';
import { asKeyPolicyRefusal } from '../../accounts/key-policy-refusal.js';
import { applyPolicyInput, type KeyPolicy, NO_POLICY, policyView } from '../../accounts/key-policy.js';
import { outboundPolicy } from '../../config.js';
import { createKeyAsActor, setKeyPolicyAsActor } from '../../operator/operator-actions.js';
import { PasswordHasher } from '../../console/passwords.js';
import { consoleRefusal, refusalOf } from '../../console-refusal.js';
import { readCookie, SESSION_COOKIE, sessionCookie } from '../../console/session-http.js';
import {
  checkPassword,
  closeSession,
  normalizeEmail,
  openSession,
  signIn,
  signUp,
  type SessionUser,
} from '../../console/users.js';
import type { Context } from '../../context.js';
import { CREDIT_PACKS, CUSTOM_AMOUNT } from '../../../generated/credit-packs.js';
import { refuseFutureMonth, statementCsv, statementOf } from '../../reports/statement.js';
import type { TaskState } from '../../tasks/states.js';
import { recentTasksOfAccounts, usageRows } from '../../tasks/task-rows.js';
import {
  addEndpoint,
  deleteEndpoint,
  disableEndpoint,
  enableEndpoint,
  isDeliveryOfAccount,
  isEndpointOfAccount,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  rotateAccountSecret,
  rotateEndpointSecret,
  setAccountWebhookSettings,
  lowBalanceThreshold,
} from '../../webhooks/admin.js';
import { EVENT_TYPES } from '../../webhooks/events.js';
import type { ApiRequest, ConsoleRequests } from '../api-request.js';
import type { RateLimits } from '../rate-limits.js';
import { csvReply } from './csv-reply.js';

type ConsoleAccountHandlers = Omit<
  Handlers<ConsoleRequests>,
  | 'playgroundModels'
  | 'playgroundBalance'
  | 'playgroundQuote'
  | 'playgroundCreateTask'
  | 'playgroundTask'
  | 'playgroundUpload'
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
  | 'operatorAudit'
>;

const DAY_MS = 24 * 3600 * 1000;
/** An instant as ISO 8601; a column that may be empty stays null. */
function iso(ms: number): string;
function iso(ms: number | null): string | null;
function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
const ok = <T>(data: T) => ({ status: 200, data });

/** Opens a session for a user just signed up or in: the cookie, and the CSRF token the pages send back. */
async function signedIn(req: ApiRequest, userId: string) {
  const session = await openSession(req.ctx.db, userId, req.ctx.clock.now());
  return {
    status: 200,
    data: { csrfToken: session.csrfToken },
    headers: { 'Set-Cookie': sessionCookie(req.ctx, session.cookie) },
  };
}

/** An endpoint of the user's API account, or 404. */
async function ownEndpoint(ctx: Context, user: SessionUser, endpointId: string): Promise<string> {
  if (!(await isEndpointOfAccount(ctx.db, user.accountId, endpointId)))
    throw consoleRefusal('not_found', 'no such endpoint');
  return endpointId;
}

/**
 * The console's operations (generated/console/routes.ts): sign-up, sign-in, sign-out and the
 * session's JSON API (keys, webhooks, settings, balance, usage, tasks). Bound like the API's
 * (runtime/http/app.ts), behind the session authenticator (runtime/http/session-auth.ts).
 */
export function consoleHandlers(ctx: Context, limits: RateLimits): ConsoleAccountHandlers {
  const passwords = new PasswordHasher(ctx.config.passwordHashConcurrency, ctx.config.passwordHashQueue);
  return {
    async consoleSignUp(req) {
      // A malformed request is answered before it counts: only attempts that could grant credits (or answer 409) do.
      normalizeEmail(req.body.email);
      checkPassword(req.body.password);
      await limits.admitSignUp(req.raw, req.reply);
      return signedIn(req, await signUp(req.ctx.db, passwords, req.body.email, req.body.password, req.ctx.clock.now()));
    },

    async consoleSignIn(req) {
      const email = req.body.email;
      await limits.admitSignIn(req.raw, req.reply, email);
      try {
        const userId = await signIn(req.ctx.db, passwords, req.body.email, req.body.password);
        await limits.signInSucceeded(req.raw, email);
        return signedIn(req, userId);
      } catch (error) {
        if (refusalOf(error)?.reason === 'wrong_credentials') await limits.signInFailed(req.raw, email);
        throw error;
      }
    },

    async consoleSignOut(req) {
      const cookie = readCookie(req.raw, SESSION_COOKIE);
      if (cookie) await closeSession(req.ctx.db, cookie);
      return { status: 200, data: {}, headers: { 'Set-Cookie': sessionCookie(req.ctx, '', 0) } };
    },

    async consoleSession(req) {
      const { user } = req;
      return ok({
        email: user.email,
        accountId: user.accountId,
        role: user.role,
        csrfToken: user.csrfToken,
        language: user.language,
        uiLanguage: req.language,
        payloadVersion: user.payloadVersion,
        languages: [...LANGUAGES],
        events: EVENT_TYPES.filter((e) => e !== 'task.canceled'),
      });
    },

    async consoleListKeys(req) {
      return ok(await keysWithPolicy(req.ctx.db, req.user.accountId, req.ctx.clock.now()));
    },

    /**
     * A personal key, or a team workspace's key (workspace `team:NAME`): the secret is in this answer
     * only. With a `policy`, the key has it from its first request on, and its making is audited as the
     * CLI's (key.create, the signed-in user the actor); a plain key is not, as before.
     */
    async consoleCreateKey(req) {
      const { team, policy: input = {} } = req.body ?? {};
      const workspace = typeof team === 'string' && team.trim() ? `team:${team.trim()}` : 'personal';
      if (workspace !== 'personal' && !/^team:[A-Za-z0-9_.-]{1,64}$/.test(workspace))
        throw consoleRefusal('invalid_team', 'a team name has 1 to 64 letters, digits, _ . -');
      const now = req.ctx.clock.now();
      // The policy is checked by the CLI's one validator, as consoleSetKeyPolicy's; refused in the caller's language.
      let policy: KeyPolicy;
      try {
        policy = applyPolicyInput(NO_POLICY, input, now);
      } catch (error) {
        throw asKeyPolicyRefusal(error, 'policy.');
      }
      const { apiKey, keyId } = await createKeyAsActor(
        req.ctx.db,
        { actor: req.user.userId, clientAddress: req.raw.ip },
        { accountId: req.user.accountId, workspace, policy },
        now,
        { auditPlainKey: false },
      );
      return ok({ apiKey, keyId, workspace });
    },

    async consoleRevokeKey(req) {
      const { keyId } = req.params;
      if (!(await isKeyOfAccount(req.ctx.db, req.user.accountId, keyId)))
        throw consoleRefusal('not_found', 'no such key');
      return ok({ revoked: await revokeKey(req.ctx.db, keyId, req.ctx.clock.now()) });
    },

    /**
     * Sets or clears parts of the policy of one of the account's keys, validated as `keys set`
     * validates it and audited as it is (key.policy), the actor the signed-in user. Another
     * account's key is not found.
     */
    async consoleSetKeyPolicy(req) {
      const { keyId } = req.params;
      const by = { actor: req.user.userId, clientAddress: req.raw.ip };
      const policy = await setKeyPolicyAsActor(
        req.ctx.db,
        by,
        keyId,
        req.body,
        req.ctx.clock.now(),
        req.user.accountId,
      ).catch((error: unknown) => {
        throw asKeyPolicyRefusal(error);
      });
      if (!policy) throw consoleRefusal('not_found', 'no such key');
      return ok({ keyId, policy: policyView(policy) });
    },

    /** The account webhook signing secret (task callbacks): a new one, shown in this answer only. */
    async consoleRotateWebhookSecret(req) {
      return ok({ secret: await rotateAccountSecret(req.ctx.db, req.user.accountId) });
    },

    async consoleListEndpoints(req) {
      return ok(await listEndpoints(req.ctx.db, req.user.accountId, req.ctx.clock.now()));
    },

    async consoleAddEndpoint(req) {
      const { url, events } = req.body;
      return ok(
        await addEndpoint(req.ctx.db, {
          accountId: req.user.accountId,
          url,
          events: Array.isArray(events) ? events.join(',') : events,
          policy: outboundPolicy(req.ctx.config),
          now: req.ctx.clock.now(),
        }),
      );
    },

    /** Disable, enable, rotate the secret of (shown once; the old one signs beside it for 24 h) and delete an endpoint of the user's API account. */
    async consoleDisableEndpoint(req) {
      const endpointId = await ownEndpoint(req.ctx, req.user, req.params.endpointId);
      return ok({ disabled: await disableEndpoint(req.ctx.db, req.user.accountId, endpointId, req.ctx.clock.now()) });
    },
    async consoleEnableEndpoint(req) {
      const endpointId = await ownEndpoint(req.ctx, req.user, req.params.endpointId);
      return ok({ enabled: await enableEndpoint(req.ctx.db, req.user.accountId, endpointId) });
    },
    async consoleRotateEndpointSecret(req) {
      const endpointId = await ownEndpoint(req.ctx, req.user, req.params.endpointId);
      return ok(await rotateEndpointSecret(req.ctx.db, req.user.accountId, endpointId, req.ctx.clock.now()));
    },
    async consoleDeleteEndpoint(req) {
      const endpointId = await ownEndpoint(req.ctx, req.user, req.params.endpointId);
      return ok({ deleted: await deleteEndpoint(req.ctx.db, req.user.accountId, endpointId) });
    },

    async consoleListDeliveries(req) {
      return ok(await listDeliveries(req.ctx.db, req.user.accountId, 100));
    },
    async consoleResendDelivery(req) {
      const { deliveryId } = req.params;
      if (!(await isDeliveryOfAccount(req.ctx.db, req.user.accountId, deliveryId)))
        throw consoleRefusal('not_found', 'no such delivery');
      return ok(await resendDelivery(req.ctx.db, deliveryId, req.ctx.clock.now()));
    },

    async consoleSaveSettings(req) {
      const { user, body } = req;
      const language = body.language === '' || body.language === null ? null : body.language;
      if (language !== undefined && language !== null && !(LANGUAGES as readonly string[]).includes(language))
        throw consoleRefusal('invalid_language', `language must be one of ${LANGUAGES.join(', ')}`);
      const { payloadVersion, lowBalanceCredits } = body;
      await setAccountWebhookSettings(req.ctx.db, user.accountId, { language, payloadVersion, lowBalanceCredits });
      return ok({
        language: language === undefined ? user.language : language,
        payloadVersion: payloadVersion ?? user.payloadVersion,
        lowBalanceCredits: await lowBalanceThreshold(req.ctx.db, user.accountId),
      });
    },

    async consoleBalance(req) {
      const { user } = req;
      const wallets = await req.ctx.ledger.balances(req.ctx.db.kysely, [user.accountId, user.playgroundAccountId]);
      const shape = (id: string) => {
        const w = wallets.get(id)!;
        return {
          available: w.available,
          held: w.held,
          spent: w.spent,
          purchased: w.purchased,
          availableCost: creditsToUsd(w.available),
        };
      };
      const threshold = await lowBalanceThreshold(req.ctx.db, user.accountId);
      const api = shape(user.accountId);
      return ok({
        api,
        playground: shape(user.playgroundAccountId),
        lowBalance: { thresholdCredits: threshold, low: threshold !== null && api.available < threshold },
      });
    },

    /** The packs on sale, or none when payments are off (the page then shows no buy button). */
    async consolePaymentPacks(req) {
      const on = req.ctx.payments !== undefined;
      return ok({
        enabled: on,
        packs: on ? CREDIT_PACKS.map((pack) => ({ ...pack })) : [],
        custom: on && CUSTOM_AMOUNT ? { ...CUSTOM_AMOUNT } : null,
        owed: await req.ctx.ledger.owed(req.ctx.db.kysely, req.user.accountId),
      });
    },

    /** A Checkout Session for the API account; the credits arrive with the payment's confirmation. */
    async consoleCheckout(req) {
      const { payments } = req.ctx;
      if (!payments) throw consoleRefusal('payments_off', 'payments are off on this service');
      const { pack: name, credits } = req.body;
      if ((name === undefined) === (credits === undefined))
        throw consoleRefusal('invalid_request', 'name a pack or a number of credits, not both');
      const pack = payments.packOf({ pack: name, credits });
      if (pack === 'unknown_pack') throw consoleRefusal('unknown_pack', `no credit pack is named ${name}`);
      if (typeof pack === 'string')
        throw consoleRefusal('custom_amount', `${credits} credits cannot be bought (${pack})`);
      let session: { url: string };
      try {
        session = await payments.checkout(req.user.accountId, pack, req.ctx.clock.now());
      } catch (error) {
        // The processor's message can name the key's last digits: only its class is logged.
        req.ctx.log.warn({ error: (error as Error).name }, 'checkout session not created');
        throw consoleRefusal('payments_unavailable', 'the payment processor could not be reached');
      }
      return ok({ url: session.url });
    },

    /**
     * The statement of the user's API account (runtime/reports/statement.ts): the session is the
     * owner's, so no key scope applies. `format=csv` is the page's download link (a plain GET with
     * the session cookie), the same lines getStatement answers.
     */
    async consoleStatement(req) {
      refuseFutureMonth(req.params.month, req.ctx.clock.now());
      const statement = await statementOf(req.ctx.db.kysely, req.user.accountId, req.params.month);
      if (req.query.format === 'csv') return csvReply(statementCsv(statement), `statement-${statement.month}.csv`);
      return ok(statement);
    },

    /** Tasks of the last 30 days of both wallets, by UTC day and by model (settled charges). */
    async consoleUsage(req) {
      const { user } = req;
      const now = req.ctx.clock.now();
      const to = now - (now % DAY_MS) + DAY_MS;
      const rows = await usageRows(
        req.ctx.db.kysely,
        { accountIds: [user.accountId, user.playgroundAccountId] },
        to - 30 * DAY_MS,
        to,
      );
      const byDay = new Map<string, { tasks: number; api: number; playground: number }>();
      const byModel = new Map<string, { tasks: number; credits: number }>();
      for (let day = to - 30 * DAY_MS; day < to; day += DAY_MS)
        byDay.set(new Date(day).toISOString().slice(0, 10), { tasks: 0, api: 0, playground: 0 });
      for (const row of rows) {
        const credits = row.settled === 1 ? (row.charged_credits ?? 0) : 0;
        const day = byDay.get(new Date(row.created_at).toISOString().slice(0, 10))!;
        day.tasks += 1;
        if (row.account_id === user.accountId) day.api += credits;
        else day.playground += credits;
        const model = byModel.get(row.model) ?? { tasks: 0, credits: 0 };
        model.tasks += 1;
        model.credits += credits;
        byModel.set(row.model, model);
      }
      return ok({
        byDay: [...byDay.entries()].map(([day, e]) => ({ day, ...e })),
        byModel: [...byModel.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([model, e]) => ({ model, ...e })),
      });
    },

    async consoleListTasks(req) {
      const { user } = req;
      const rows = await recentTasksOfAccounts(req.ctx.db.kysely, [user.accountId, user.playgroundAccountId], 100);
      return ok(
        rows.map((r) => ({
          taskId: r.id,
          model: r.model,
          state: r.state as TaskState,
          wallet: r.account_id === user.accountId ? 'api' : 'playground',
          credits: r.settled === 1 ? (r.charged_credits ?? 0) : r.max_credits,
          settled: r.settled === 1,
          errorCode: r.error_code,
          createdAt: iso(r.created_at),
        })),
      );
    },
  };
}
