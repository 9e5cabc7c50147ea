import type { FastifyInstance } from 'fastify';
import { LANGUAGES } from '../../generated/errors.js';
import { creditsToUsd } from '../../generated/support.js';
import { createKey, revokeKey } from '../accounts/accounts.js';
import { outboundPolicy } from '../config.js';
import type { Context } from '../context.js';
import { addEndpoint, deleteEndpoint, disableEndpoint, enableEndpoint, listDeliveries, listEndpoints, resendDelivery, rotateAccountSecret, rotateEndpointSecret, setAccountWebhookSettings } from '../webhooks/admin.js';
import { EVENT_TYPES } from '../webhooks/events.js';
import { consoleLanguage, readCookie, requireRequestedWith, sendConsoleError, SESSION_COOKIE, sessionCookie, sessionRoute } from './session-http.js';
import { closeSession, ConsoleError, openSession, signIn, signUp, type SessionUser } from './users.js';

const DAY_MS = 24 * 3600 * 1000;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function authRoute(app: FastifyInstance, ctx: Context, url: string, run: (body: Record<string, unknown>) => Promise<string>) {
  app.post(url, async (request, reply) => {
    reply.header('Cache-Control', 'no-store');
    try {
      requireRequestedWith(request);
      const body = (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>;
      const userId = await run(body);
      const session = await openSession(ctx.db, userId, ctx.clock.now());
      reply.header('Set-Cookie', sessionCookie(ctx, session.cookie));
      return reply.send({ code: 200, msg: 'success', data: { csrfToken: session.csrfToken }, request_id: request.id });
    } catch (error) {
      return sendConsoleError(request, reply, error, consoleLanguage(request));
    }
  });
}

/** Sign-up, sign-in, sign-out and the console's JSON API (keys, webhooks, settings, balance, usage, tasks). */
export function registerConsoleApi(app: FastifyInstance, ctx: Context) {
  const db = ctx.db;
  authRoute(app, ctx, '/console/api/signup', (body) => signUp(db, body.email, body.password, ctx.clock.now()));
  authRoute(app, ctx, '/console/api/signin', (body) => signIn(db, body.email, body.password));

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
    const rows = await db.kysely.selectFrom('api_keys').selectAll().where('account_id', '=', user.accountId).orderBy('created_at').orderBy('id').execute();
    return rows.map((k) => ({ keyId: k.id, prefix: k.key_prefix, workspace: k.workspace, createdAt: iso(k.created_at), revokedAt: iso(k.revoked_at) }));
  });

  /** A personal key, or a team workspace's key (workspace `team:NAME`): the secret is in this answer only. */
  sessionRoute(app, ctx, 'POST', '/console/api/keys', async ({ user, body }) => {
    const workspace = typeof body.team === 'string' && body.team.trim() ? `team:${body.team.trim()}` : 'personal';
    if (workspace !== 'personal' && !/^team:[A-Za-z0-9_.-]{1,64}$/.test(workspace)) throw new ConsoleError(400, 'invalid_team', 'a team name has 1 to 64 letters, digits, _ . -');
    const { apiKey, keyId } = await createKey(db, user.accountId, workspace, ctx.clock.now());
    return { apiKey, keyId, workspace };
  });

  sessionRoute(app, ctx, 'POST', '/console/api/keys/:keyId/revoke', async ({ user, params }) => {
    const key = await db.kysely.selectFrom('api_keys').select('id').where('id', '=', params.keyId).where('account_id', '=', user.accountId).executeTakeFirst();
    if (!key) throw new ConsoleError(404, 'not_found', 'no such key');
    return { revoked: await revokeKey(db, key.id, ctx.clock.now()) };
  });

  /** The account webhook signing secret (task callbacks): a new one, shown in this answer only. */
  sessionRoute(app, ctx, 'POST', '/console/api/webhook-secret/rotate', async ({ user }) => ({ secret: await rotateAccountSecret(db, user.accountId) }));

  sessionRoute(app, ctx, 'GET', '/console/api/endpoints', async ({ user }) => listEndpoints(db, user.accountId, ctx.clock.now()));
  sessionRoute(app, ctx, 'POST', '/console/api/endpoints', async ({ user, body }) => {
    const events = Array.isArray(body.events) ? body.events.join(',') : String(body.events ?? '');
    return addEndpoint(db, { accountId: user.accountId, url: String(body.url ?? ''), events, policy: outboundPolicy(ctx.config), now: ctx.clock.now() });
  });

  /** Disable, enable, rotate the secret of (shown once; the old one signs beside it for 24 h) and delete an endpoint of the user's API account. */
  const ownEndpoint = async (user: SessionUser, endpointId: string) => {
    const row = await db.kysely.selectFrom('webhook_endpoints').select('id').where('id', '=', endpointId).where('account_id', '=', user.accountId).executeTakeFirst();
    if (!row) throw new ConsoleError(404, 'not_found', 'no such endpoint');
    return row.id;
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
    const row = await db.kysely.selectFrom('webhook_deliveries').select('id').where('id', '=', params.deliveryId).where('account_id', '=', user.accountId).executeTakeFirst();
    if (!row) throw new ConsoleError(404, 'not_found', 'no such delivery');
    return resendDelivery(db, row.id, ctx.clock.now());
  });

  sessionRoute(app, ctx, 'POST', '/console/api/settings', async ({ user, body }) => {
    const language = body.language === '' || body.language === null ? null : (body.language as string | undefined);
    if (language !== undefined && language !== null && !(LANGUAGES as readonly string[]).includes(language)) throw new ConsoleError(400, 'invalid_language', `language must be one of ${LANGUAGES.join(', ')}`);
    const payloadVersion = body.payloadVersion === undefined ? undefined : Number(body.payloadVersion);
    await setAccountWebhookSettings(db, user.accountId, { language, payloadVersion });
    return { language: language === undefined ? user.language : language, payloadVersion: payloadVersion ?? user.payloadVersion };
  });

  sessionRoute(app, ctx, 'GET', '/console/api/balance', async ({ user }) => {
    const wallets = await db.kysely.selectFrom('wallets').selectAll().where('account_id', 'in', [user.accountId, user.playgroundAccountId]).execute();
    const shape = (id: string) => {
      const w = wallets.find((x) => x.account_id === id)!;
      return { available: w.available, held: w.held, spent: w.spent, purchased: w.purchased, availableCost: creditsToUsd(w.available) };
    };
    return { api: shape(user.accountId), playground: shape(user.playgroundAccountId) };
  });

  /** Tasks of the last 30 days of both wallets, by UTC day and by model (settled charges). */
  sessionRoute(app, ctx, 'GET', '/console/api/usage', async ({ user }) => {
    const now = ctx.clock.now();
    const to = now - (now % DAY_MS) + DAY_MS;
    const rows = await db.kysely
      .selectFrom('tasks')
      .select(['model', 'created_at', 'charged_credits', 'settled', 'account_id'])
      .where('account_id', 'in', [user.accountId, user.playgroundAccountId])
      .where('created_at', '>=', to - 30 * DAY_MS)
      .execute();
    const byDay = new Map<string, { tasks: number; api: number; playground: number }>();
    const byModel = new Map<string, { tasks: number; credits: number }>();
    for (let day = to - 30 * DAY_MS; day < to; day += DAY_MS) byDay.set(new Date(day).toISOString().slice(0, 10), { tasks: 0, api: 0, playground: 0 });
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
    const rows = await db.kysely
      .selectFrom('tasks')
      .select(['id', 'model', 'state', 'account_id', 'charged_credits', 'max_credits', 'settled', 'created_at', 'error_code'])
      .where('account_id', 'in', [user.accountId, user.playgroundAccountId])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(100)
      .execute();
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
