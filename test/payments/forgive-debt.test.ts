/**
 * An operator forgives a debt (issue 39 point 5): what a refund could not take back refuses new
 * work with 402 40202 until a purchase pays it or an operator forgives it, through the console
 * (operator only, once per idempotency key) or the CLI; each writes one `debt_forgiven` ledger row
 * and one audit row, and forgiving an account that owes nothing writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDIT_PACKS } from '../../generated/credit-packs.js';
import { signUp, type ConsoleUser } from '../console/support.js';
import { bodyD } from '../http/helpers.js';
import { mediaforgeCli } from '../support/cli-process.js';
import { waitForTerminal } from '../support/service.js';
import { buy, customer, deliver, event, type PaymentsWorld, startPaymentsWorld } from './support.js';

const PACK = CREDIT_PACKS[0]!;
/** A prompt the simulator fails on (MEDIAFORGE_SIMULATOR_FAIL_WHEN_PROMPT_CONTAINS). */
const FAIL = 'FAIL-THIS-PROMPT';
/** A model the compatible layer takes with a prompt alone. */
const COMPAT_MODEL = 'vendor_b/family_c-2.6/reference-to-video';

let world: PaymentsWorld;
let operator: ConsoleUser;

const cli = (args: string[]) => mediaforgeCli(world.t.config.dbUrl, args);

const ledger = (accountId: string) =>
  world.t.service.ctx.db.kysely
    .selectFrom('ledger_entries')
    .select(['kind', 'amount', 'note'])
    .where('account_id', '=', accountId)
    .where('kind', '=', 'debt_forgiven')
    .execute();

const audits = async (accountId: string) =>
  (await operator.call('GET', '/console/api/operator/audit')).body.data.filter(
    (e: { action: string; target: string }) => e.action === 'debt.forgive' && e.target === accountId,
  );

/** A customer who bought a pack, spent part of it on a task, then had the whole payment refunded: owes what it spent. */
async function indebted(): Promise<{ accountId: string; key: string; owed: number }> {
  const { user, accountId } = await customer(world.t);
  const session = await buy(world, user, { pack: PACK.name });
  await deliver(world.t, event('checkout.session.completed', session));
  const key = (await user.call('POST', '/console/api/keys', {})).body.data.apiKey as string;
  const created = await world.t.call('POST', '/api/v1/jobs/createTask', { key, body: bodyD() });
  expect(created.status).toBe(202);
  await waitForTerminal(world.t, key, created.body.data.taskId);
  // A task that fails (nothing charged), to be retried while the account owes.
  const failing = await world.t.call('POST', '/api/v1/jobs/createTask', { key, body: bodyD(`${FAIL} a fox`) });
  expect((await waitForTerminal(world.t, key, failing.body.data.taskId)).state).toBe('failed');
  await deliver(world.t, event('charge.refunded', world.stripe.refund(session.id, PACK.price)));
  // Every way to start work is refused while anything is owed: createTask, retry and POST /v1/videos.
  const refused = await world.t.call('POST', '/api/v1/jobs/createTask', { key, body: bodyD() });
  expect([refused.status, refused.body.code]).toEqual([402, 40202]);
  const retried = await world.t.call('POST', '/api/v1/jobs/retry', {
    key,
    body: { taskId: failing.body.data.taskId },
  });
  expect([retried.status, retried.body.code]).toEqual([402, 40202]);
  const compat = await world.t.call('POST', '/v1/videos', {
    key,
    body: { model: COMPAT_MODEL, prompt: 'a lighthouse at dusk', seconds: '4' },
  });
  expect(compat.status, JSON.stringify(compat.body)).toBe(402);
  expect(compat.body.error.message).toMatch(/owes/);
  const { spent } = await world.t.wallet(accountId);
  return { accountId, key, owed: spent };
}

beforeAll(async () => {
  world = await startPaymentsWorld({ simulatorFailWhenPromptContains: FAIL });
  operator = await signUp(world.t, 'ops@example.test');
  const promoted = await cli(['users', 'promote', '--email', 'ops@example.test']);
  expect(promoted.code, promoted.stderr).toBe(0);
}, 60_000);
afterAll(async () => world?.close());

describe('forgiving a debt', () => {
  it('the console: the operator forgives once per idempotency key; new work is accepted again; a customer cannot', async () => {
    const { accountId, key, owed } = await indebted();
    const path = `/console/api/operator/accounts/${accountId}/forgive-debt`;
    const { user: stranger } = await customer(world.t);
    expect((await stranger.call('POST', path, { note: 'mine now' })).status).toBe(403);

    const body = { note: 'refund was our mistake', idempotencyKey: 'forgive-1' };
    const first = await operator.call('POST', path, body);
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ accountId, forgiven: owed, replayed: false, balance: { owed: 0 } });
    const again = await operator.call('POST', path, body);
    expect(again.body.data).toMatchObject({ forgiven: 0, replayed: true });

    expect(await ledger(accountId)).toEqual([{ kind: 'debt_forgiven', amount: owed, note: 'refund was our mistake' }]);
    expect(await audits(accountId)).toEqual([
      expect.objectContaining({ details: { forgiven: owed, note: 'refund was our mistake' } }),
    ]);
    const quote = await world.t.call('POST', '/api/v1/jobs/quote', { key, body: bodyD() });
    expect(quote.body.code).not.toBe(40202);
    await world.t.checkLedger(accountId);
  });

  it('the CLI: forgives, audited; a second run finds nothing owed and writes nothing', async () => {
    const { accountId, owed } = await indebted();
    const first = await cli(['accounts', 'forgive-debt', '--account', accountId, '--note', 'goodwill', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ accountId, forgiven: owed, replayed: false });
    const second = await cli(['accounts', 'forgive-debt', '--account', accountId]);
    expect(second.stdout).toContain('owes nothing');
    expect(await ledger(accountId)).toHaveLength(1);
    expect(await audits(accountId)).toHaveLength(1);
    expect((await world.t.wallet(accountId)).available).toBe(0);
    await world.t.checkLedger(accountId);
  });

  it.each([
    ['an unknown account, in the console', { console: true, account: 'acct_nobody', want: 404 }],
    ['an unknown account, in the CLI', { console: false, account: 'acct_nobody', want: 1 }],
  ])('refuses %s', async (_name, { console, account, want }) => {
    if (console)
      expect(
        (await operator.call('POST', `/console/api/operator/accounts/${account}/forgive-debt`, { note: 'x' })).status,
      ).toBe(want);
    else expect((await cli(['accounts', 'forgive-debt', '--account', account])).code).toBe(want);
  });
});
