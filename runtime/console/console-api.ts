import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LANGUAGES } from '../../generated/errors.js';
import { creditsToUsd } from '../../generated/support.js';
import { createKey, isKeyOfAccount, keysOfAccount, revokeKey } from '../accounts/accounts.js';
import { outboundPolicy } from '../config.js';
import type { Context } from '../context.js';
import { walletsOf } from '../ledger/wallets.js';
import { recentTasksOfAccounts, usageRows } from '../tasks/task-rows.js';
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
} from '../webhooks/admin.js';
import { EVENT_TYPES } from '../webhooks/events.js';
import {
  consoleLanguage,
  readCookie,
  requireRequestedWith,
  sendConsoleError,
  SESSION_COOKIE,
  sessionCookie,
  sessionRoute,
} from './session-http.js';
import type { RateLimits } from '../http/rate-limits.js';
import { PasswordHasher } from './passwords.js';
import { consoleRefusal, refusalOf } from './refusal.js';
import { checkPassword, closeSession, normalizeEmail, openSession, signIn, signUp, type SessionUser } from './users.js';

const DAY_MS = 24 * 3600 * 1000;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

type AuthRun = (body: Record<string, unknown>, request: FastifyRequest, reply: FastifyReply) => Promise<string>;

function authRoute(app: FastifyInstance, ctx: Context, url: string, run: AuthRun) {
  app.post(url, async (request, reply) => {
    reply.header('Cache-Control', 'no-store');
    try {
      requireRequestedWith(request);
      const body = (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>;
      const userId = await run(body, request, reply);
      const session = await openSession(ctx.db, userId, ctx.clock.now());
      reply.header('Set-Cookie', sessionCookie(ctx, session.cookie));
      return reply.send({ code: 200, msg: 'success', data: { csrfToken: session.csrfToken }, request_id: request.id });
    } catch (error) {
      return sendConsoleError(request, reply, error, consoleLanguage(request));
    }
  });
}

/** Sign-up, sign-in, sign-out and the console's JSON API (keys, webhooks, settings, balance, usage, tasks). */
export function registerConsoleApi(app: FastifyInstance, ctx: Context, limits: RateLimits) {
  const db = ctx.db;
  const passwords = new PasswordHasher(ctx.config.passwordHashConcurrency, ctx.config.passwordHashQueue);
  authRoute(app, ctx, '/console/api/signup', async (body, request, reply) => {
    // A malformed request is answered before it counts: only attempts that could grant credits (or answer 409) do.
    normalizeEmail(body.email);
    checkPassword(body.password);
    await limits.admitSignUp(request, reply);
    return signUp(db, passwords, body.email, body.password, ctx.clock.now());
  });
  authRoute(app, ctx, '/console/api/signin', async (body, request, reply) => {
    const email = typeof body.email === 'string' ? body.email : '';
    await limits.admitSignIn(request, reply, email);
    try {
      const userId = await signIn(db, passwords, body.email, body.password);
      await limits.signInSucceeded(request, email);
      return userId;
    } catch (error) {
      if (refusalOf(error)?.reason === 'wrong_credentials') await limits.signInFailed(request, email);
      throw error;
    }
  });

  sessionRoute(app, ctx, 'POST', '/console/api/signout', async ({ request, reply }) => {
    const cookie = readCookie(request, SESSION_COOKIE);
    if (cookie) await closeSession(db, cookie);
    reply.header('Set-Cookie', sessionCookie(ctx, '', 0));
    return {};
  });

  sessionRoute(app, ctx, 'GET', '/console/api/session', async ({ user, language }) => ({
    email: user.email,
    csrfToken: user.csrfToken,
    language: user.language,
    uiLanguage: language,
    payloadVersion: user.payloadVersion,
    languages: LANGUAGES,
    events: EVENT_TYPES.filter((e) => e !== 'task.canceled'),
  }));

  sessionRoute(app, ctx, 'GET', '/console/api/keys', async ({ user }) => {
    const rows = await keysOfAccount(db, user.accountId);
    return rows.map((k) => ({
      keyId: k.id,
      prefix: k.key_prefix,
      workspace: k.workspace,
      createdAt: iso(k.created_at),
      revokedAt: iso(k.revoked_at),
    }));
  });

  /** A personal key, or a team workspace's key (workspace `team:NAME`): the secret is in this answer only. */
  sessionRoute(app, ctx, 'POST', '/console/api/keys', async ({ user, body }) => {
    const workspace = typeof body.team === 'string' && body.team.trim() ? `team:${body.team.trim()}` : 'personal';
    if (workspace !== 'personal' && !/^team:[A-Za-z0-9_.-]{1,64}$/.test(workspace))
      throw consoleRefusal('invalid_team', 'a team name has 1 to 64 letters, digits, _ . -');
    const { apiKey, keyId } = await createKey(db, user.accountId, workspace, ctx.clock.now());
    return { apiKey, keyId, workspace };
  });

  sessionRoute(app, ctx, 'POST', '/console/api/keys/:keyId/revoke', async ({ user, params }) => {
    if (!(await isKeyOfAccount(db, user.accountId, params.keyId))) throw consoleRefusal('not_found', 'no such key');
    return { revoked: await revokeKey(db, params.keyId, ctx.clock.now()) };
  });

  /** The account webhook signing secret (task callbacks): a new one, shown in this answer only. */
  sessionRoute(app, ctx, 'POST', '/console/api/webhook-secret/rotate', async ({ user }) => ({
    secret: await rotateAccountSecret(db, user.accountId),
  }));

  sessionRoute(app, ctx, 'GET', '/console/api/endpoints', async ({ user }) =>
    listEndpoints(db, user.accountId, ctx.clock.now()),
  );
  sessionRoute(app, ctx, 'POST', '/console/api/endpoints', async ({ user, body }) => {
    const events = Array.isArray(body.events) ? body.events.join(',') : String(body.events ?? '');
    return addEndpoint(db, {
      accountId: user.accountId,
      url: String(body.url ?? ''),
      events,
      policy: outboundPolicy(ctx.config),
      now: ctx.clock.now(),
    });
  });

  /** Disable, enable, rotate the secret of (shown once; the old one signs beside it for 24 h) and delete an endpoint of the user's API account. */
  const ownEndpoint = async (user: SessionUser, endpointId: string) => {
    if (!(await isEndpointOfAccount(db, user.accountId, endpointId)))
      throw consoleRefusal('not_found', 'no such endpoint');
    return endpointId;
  };
  sessionRoute(app, ctx, 'POST', '/console/api/endpoints/:endpointId/disable', async ({ user, params }) => ({
    disabled: await disableEndpoint(db, user.accountId, await ownEndpoint(user, params.endpointId), ctx.clock.now()),
  }));
  sessionRoute(app, ctx, 'POST', '/console/api/endpoints/:endpointId/enable', async ({ user, params }) => ({
    enabled: await enableEndpoint(db, user.accountId, await ownEndpoint(user, params.endpointId)),
  }));
  sessionRoute(app, ctx, 'POST', '/console/api/endpoints/:endpointId/rotate-secret', async ({ user, params }) =>
    rotateEndpointSecret(db, user.accountId, await ownEndpoint(user, params.endpointId), ctx.clock.now()),
  );
  sessionRoute(app, ctx, 'POST', '/console/api/endpoints/:endpointId/delete', async ({ user, params }) => ({
    deleted: await deleteEndpoint(db, user.accountId, await ownEndpoint(user, params.endpointId)),
  }));

  sessionRoute(app, ctx, 'GET', '/console/api/deliveries', async ({ user }) => listDeliveries(db, user.accountId, 100));
  sessionRoute(app, ctx, 'POST', '/console/api/deliveries/:deliveryId/resend', async ({ user, params }) => {
    if (!(await isDeliveryOfAccount(db, user.accountId, params.deliveryId)))
      throw consoleRefusal('not_found', 'no such delivery');
    return resendDelivery(db, params.deliveryId, ctx.clock.now());
  });

  sessionRoute(app, ctx, 'POST', '/console/api/settings', async ({ user, body }) => {
    const language = body.language === '' || body.language === null ? null : (body.language as string | undefined);
    if (language !== undefined && language !== null && !(LANGUAGES as readonly string[]).includes(language))
      throw consoleRefusal('invalid_language', `language must be one of ${LANGUAGES.join(', ')}`);
    const payloadVersion = body.payloadVersion === undefined ? undefined : Number(body.payloadVersion);
    await setAccountWebhookSettings(db, user.accountId, { language, payloadVersion });
    return {
      language: language === undefined ? user.language : language,
      payloadVersion: payloadVersion ?? user.payloadVersion,
    };
  });

  sessionRoute(app, ctx, 'GET', '/console/api/balance', async ({ user }) => {
    const wallets = await walletsOf(db.kysely, [user.accountId, user.playgroundAccountId]);
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
    return { api: shape(user.accountId), playground: shape(user.playgroundAccountId) };
  });

  /** Tasks of the last 30 days of both wallets, by UTC day and by model (settled charges). */
  sessionRoute(app, ctx, 'GET', '/console/api/usage', async ({ user }) => {
    const now = ctx.clock.now();
    const to = now - (now % DAY_MS) + DAY_MS;
    const rows = await usageRows(
      db.kysely,
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
    return {
      byDay: [...byDay.entries()].map(([day, e]) => ({ day, ...e })),
      byModel: [...byModel.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([model, e]) => ({ model, ...e })),
    };
  });

  sessionRoute(app, ctx, 'GET', '/console/api/tasks', async ({ user }) => {
    const rows = await recentTasksOfAccounts(db.kysely, [user.accountId, user.playgroundAccountId], 100);
    return rows.map((r) => ({
      taskId: r.id,
      model: r.model,
      state: r.state,
      wallet: r.account_id === user.accountId ? 'api' : 'playground',
      credits: r.settled === 1 ? (r.charged_credits ?? 0) : r.max_credits,
      settled: r.settled === 1,
      errorCode: r.error_code,
      createdAt: iso(r.created_at),
    }));
  });
}
