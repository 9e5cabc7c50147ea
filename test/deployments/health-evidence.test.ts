import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../runtime/accounts/accounts.js';
import { insertUser } from '../../runtime/accounts/users.js';
import { parseDeployments } from '../../runtime/routing/deployments-file.js';
import { bodyD, createTask, expectError } from '../http/helpers.js';
import { JobsProtocolServer } from '../../support/upstreams/jobs-protocol-server.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';
import { call, closedAfterEach, startMediaforge, type MediaforgeProcess } from './support.js';

/**
 * Upstream health that no customer can turn into an outage (issue 37, point 1). Each of the four
 * reproductions of the issue is a test: an attacker's tasks make a sole jobs upstream fail (a
 * prompt answered 500 at submit, four such tasks at once, a submit whose connection is reset and is
 * re-sent for as long as the task lives, a running task whose polls and reconciliation polls fail),
 * and another account's quote and createTask keep answering 200 and 202 throughout, its tasks
 * succeed, and the deployment never cools for everyone. Then the other side: failures of many
 * paying owners do cool it for everyone, while as many failures from playground accounts do not.
 */

/** Prompts the loopback upstream answers badly (anything else it runs). */
const POISON = 'POISON'; // submit answered 500
const RESET = 'RESET'; // submit read, then the connection destroyed (outcome unknown: the same task is re-sent)
const POLL_FAIL = 'POLLFAIL'; // submit accepted, every status poll answered 503

/** Three failing tasks of one owner cool it for that owner; the rest are the defaults (5 tasks of 3 owners, 50 % of the calls, within 60 s). */
const COOLDOWN = '{ failures: 3, seconds: 30 }';

describe('upstream health from evidence, not from one customer', () => {
  const opened = closedAfterEach();
  let t: TestService | undefined;
  let upstream: JobsProtocolServer | undefined;

  /**
   * A service whose one model runs on one jobs upstream; `outage.now` makes every submit fail. A
   * task whose submits keep failing is given up `submitWindowMs` after its first attempt.
   */
  async function serve(submitWindowMs = 6000) {
    const outage = { now: false };
    upstream = await new JobsProtocolServer({
      latencyMs: 150,
      submit: (_index, body) => {
        const prompt = String(body.input?.prompt ?? '');
        if (prompt.includes(RESET)) return 'reset';
        if (outage.now || prompt.includes(POISON)) return { status: 500, msg: 'internal error' };
        return undefined;
      },
      // Retry-After 0: the worker asks again at once, so the task's eight failed polls come within a second.
      pollAnswer: (job) =>
        job?.prompt.includes(POLL_FAIL) ? { status: 503, msg: 'unavailable', retryAfter: '0' } : undefined,
    }).start();
    opened.servers.push(upstream);
    const plan = parseDeployments(
      'deployments.yaml',
      [
        'upstreams:',
        `  relay: { kind: jobs, baseUrl: "${upstream.baseUrl}" }`,
        'models:',
        `  ${bodyD().model}: [{ upstream: relay }]`,
        `cooldown: ${COOLDOWN}`,
      ].join('\n'),
    );
    t = await startTestService(
      { upstreamPollMs: 50, upstreamSubmitWindowMs: submitWindowMs, upstreamReconcilePollMs: 100 },
      { deploymentsPlan: plan },
    );
    opened.service = t;
    return { outage, service: t };
  }

  /** The relay's state in /readyz (loopback: the detailed answer). */
  async function relay(): Promise<Record<string, any>> {
    const ready = await t!.call('GET', '/readyz');
    return ready.body.deployments.find((d: { name: string }) => d.name === 'relay');
  }

  /** The victim's quote answered 200, and the relay not cooling for everyone. */
  async function victimQuoted(apiKey: string, label: string): Promise<void> {
    const quote = await t!.call('POST', '/api/v1/jobs/quote', {
      key: apiKey,
      body: bodyD(`a victim's quote ${label}`),
    });
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    const state = await relay();
    expect(['ok', 'degraded'], JSON.stringify(state)).toContain(state.state);
  }

  /** The victim's quote and createTask, answered 200 and 202 (its task id), and the relay not cooling for everyone. */
  async function victimServed(apiKey: string, label: string): Promise<string> {
    await victimQuoted(apiKey, label);
    const created = await createTask(t!, apiKey, bodyD(`a victim's fox ${label}, Picture 1`));
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    return created.body.data.taskId;
  }

  async function victimSucceeded(apiKey: string, ids: string[], accountId: string) {
    const tasks = await Promise.all(ids.map((id) => waitForTerminal(t!, apiKey, id, 20_000)));
    expect(tasks.map((task) => task.state)).toEqual(ids.map(() => 'succeeded'));
    await t!.checkLedger(accountId);
  }

  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('one task whose prompt the upstream answers 500, retried for its whole submit window: nobody else notices', async () => {
    // Rounds come 1 to 2 s apart, and later on a loaded machine: 12 s holds at least four of them (6 s held three at worst).
    await serve(12_000);
    const attacker = await t!.account(1000);
    const victim = await t!.account(100_000);
    const poisoned = await createTask(t!, attacker.apiKey, bodyD(`${POISON} a fox, Picture 1`));
    expect(poisoned.status).toBe(202);
    const ids: string[] = [];
    // Through the attacker's task's whole life (a 12 s submit window, a round every 1 to 2 s).
    while (
      (await t!.call('GET', `/api/v1/jobs/recordInfo?taskId=${poisoned.body.data.taskId}`, { key: attacker.apiKey }))
        .body.data.state === 'queued'
    ) {
      // Quotes only meanwhile: a victim's task that the upstream answers would end the attacker's run of failures.
      await victimQuoted(victim.apiKey, String(ids.length));
      await pause(300);
    }
    // Re-sent more often than the three failures in a row that used to cool the deployment for everyone.
    expect(
      upstream!.submits.filter((s) => String(s.body.input?.prompt).includes(POISON)).length,
    ).toBeGreaterThanOrEqual(4);
    expect((await waitForTerminal(t!, attacker.apiKey, poisoned.body.data.taskId)).state).toBe('failed');
    ids.push(await victimServed(victim.apiKey, 'after'));
    await victimSucceeded(victim.apiKey, ids, victim.accountId);
    await t!.checkLedger(attacker.accountId);
    expect((await relay()).coolingUntil).toBeNull();
  }, 60_000);

  it("four such tasks sent together cool the deployment for their owner alone: its next task is refused 503, everyone else's accepted", async () => {
    await serve();
    const attacker = await t!.account(1000);
    const victim = await t!.account(100_000);
    const sent = await Promise.all(
      [0, 1, 2, 3].map((i) => createTask(t!, attacker.apiKey, bodyD(`${POISON} fox ${i}, Picture 1`))),
    );
    expect(sent.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    const end = Date.now() + 15_000;
    while ((await relay()).coolingOwners !== 1) {
      if (Date.now() > end) throw new Error(`the owner never cooled: ${JSON.stringify(await relay())}`);
      await pause(50);
    }
    // The attacker's next task fails fast (its own cool-down), with nothing held ...
    const before = await t!.wallet(attacker.accountId);
    const refused = await createTask(t!, attacker.apiKey, bodyD(`${POISON} fox 4, Picture 1`));
    expectError(refused, 503, 50301);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await t!.wallet(attacker.accountId)).toEqual(before);
    // ... and the victim is served: quotes, creates, tasks that succeed, the deployment never cooling for everyone.
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await victimServed(victim.apiKey, String(i)));
      await pause(200);
    }
    await victimSucceeded(victim.apiKey, ids, victim.accountId);
    expect(await relay()).toMatchObject({ coolingUntil: null, coolingOwners: 1 });
  }, 60_000);

  it('a submit whose outcome is unknown, re-sent to its idempotent upstream again and again, counts once', async () => {
    await serve();
    const attacker = await t!.account(1000);
    const victim = await t!.account(100_000);
    const hanging = await createTask(t!, attacker.apiKey, bodyD(`${RESET} a fox, Picture 1`));
    expect(hanging.status).toBe(202);
    const resent = () => upstream!.submits.filter((s) => String(s.body.input?.prompt).includes(RESET));
    const ids: string[] = [];
    const end = Date.now() + 20_000;
    while (resent().length < 4) {
      if (Date.now() > end) throw new Error(`re-sent only ${resent().length} times`);
      ids.push(await victimServed(victim.apiKey, String(ids.length)));
      await pause(300);
    }
    // Every re-send carried the same Idempotency-Key: one job, one task, one piece of evidence.
    expect(new Set(resent().map((s) => s.idempotencyKey)).size).toBe(1);
    await victimSucceeded(victim.apiKey, ids, victim.accountId);
    expect(await relay()).toMatchObject({ coolingUntil: null, coolingOwners: 0 });
  }, 60_000);

  it('a running task whose status polls fail 8 times, then its reconciliation polls: nobody else notices', async () => {
    await serve();
    const attacker = await t!.account(1000);
    const victim = await t!.account(100_000);
    const polled = await createTask(t!, attacker.apiKey, bodyD(`${POLL_FAIL} a fox, Picture 1`));
    expect(polled.status).toBe(202);
    const ids: string[] = [];
    const pollsAtStart = upstream!.polls;
    // The task fails after its polls kept failing; its reconciliation polls (every 100 ms here) fail too.
    let state = 'queued';
    while (state === 'queued' || state === 'running') {
      ids.push(await victimServed(victim.apiKey, String(ids.length)));
      await pause(300);
      state = (
        await t!.call('GET', `/api/v1/jobs/recordInfo?taskId=${polled.body.data.taskId}`, { key: attacker.apiKey })
      ).body.data.state;
    }
    expect(state).toBe('failed');
    await pause(1000);
    ids.push(await victimServed(victim.apiKey, 'after'));
    expect(upstream!.polls - pollsAtStart).toBeGreaterThanOrEqual(8);
    await victimSucceeded(victim.apiKey, ids, victim.accountId);
    await t!.checkLedger(attacker.accountId);
    expect(await relay()).toMatchObject({ coolingUntil: null, coolingOwners: 0 });
  }, 60_000);

  it('failing tasks of three paying owners (five tasks) cool it for everyone: a fourth account gets 503 with nothing held', async () => {
    const { outage } = await serve();
    outage.now = true;
    const owners = await Promise.all([0, 1, 2].map(() => t!.account(1000)));
    const bystander = await t!.account(1000);
    const sent = await Promise.all(
      owners.flatMap((owner, o) =>
        [0, 1].map((i) => createTask(t!, owner.apiKey, bodyD(`fox ${o}-${i} in an outage, Picture 1`))),
      ),
    );
    expect(sent.every((r) => r.status === 202)).toBe(true);
    const end = Date.now() + 15_000;
    while ((await relay()).state !== 'cooling') {
      if (Date.now() > end) throw new Error(`never cooling for everyone: ${JSON.stringify(await relay())}`);
      await pause(50);
    }
    const before = await t!.wallet(bystander.accountId);
    const quote = await t!.call('POST', '/api/v1/jobs/quote', {
      key: bystander.apiKey,
      body: bodyD('a quote in an outage'),
    });
    expectError(quote, 503, 50301);
    expectError(await createTask(t!, bystander.apiKey, bodyD('a fox in an outage, Picture 1')), 503, 50301);
    expect(await t!.wallet(bystander.accountId)).toEqual(before);
  }, 60_000);

  it("as many failing tasks from playground accounts, and from one user's two accounts, never cool it for everyone", async () => {
    const { outage } = await serve();
    outage.now = true;
    const db = t!.service.ctx.db;
    const now = Date.now();
    // Three console users, each with an API account and a playground account (one owner each).
    const users = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const api = await createAccount(db, { credits: 1000, now });
        const playground = await createAccount(db, { credits: 1000, now });
        await insertUser(db.kysely, {
          id: `usr_health_${i}_${now}`,
          email: `owner${i}-${now}@example.com`,
          password_hash: 'x',
          account_id: api.accountId,
          playground_account_id: playground.accountId,
          created_at: now,
        });
        return { api, playground };
      }),
    );
    // Six failing tasks from the three playgrounds (no global evidence) ...
    await Promise.all(
      users.flatMap((u, o) =>
        [0, 1].map((i) => createTask(t!, u.playground.apiKey, bodyD(`playground fox ${o}-${i}, Picture 1`))),
      ),
    );
    // ... and six from the first user's API account and its playground: one owner.
    await Promise.all([0, 1, 2].map((i) => createTask(t!, users[0].api.apiKey, bodyD(`api fox ${i}, Picture 1`))));
    // Once their evidence is in (at least six failures, the first user's owner cooled; 2.5 s at the least, longer on a loaded machine) ...
    const started = Date.now();
    let state = await relay();
    while (
      state.coolingUntil === null &&
      (Date.now() - started < 2500 || state.consecutiveFailures < 6 || state.coolingOwners < 1)
    ) {
      if (Date.now() - started > 20_000) throw new Error(`the failures never came in: ${JSON.stringify(state)}`);
      await pause(100);
      state = await relay();
    }
    // ... it is not cooling for everyone: its owners cooled alone, and the second user's API account, another owner, is still accepted.
    expect(state.coolingUntil, JSON.stringify(state)).toBeNull();
    const other = await createTask(t!, users[1].api.apiKey, bodyD('a fox of another owner, Picture 1'));
    expect(other.status, JSON.stringify(other.body)).toBe(202);
    // One user's two accounts are one owner: its cool-down covers both.
    expectError(await createTask(t!, users[0].playground.apiKey, bodyD('a fox, Picture 1')), 503, 50301);
  }, 60_000);
});

/**
 * The probe is the service's own evidence (issue 37, point 8): `serve` probes each upstream at
 * start and records what it found, so a key the upstream refuses makes the deployment `down`
 * before any customer's task is let through (before, /readyz and `deployments status` said `ok`
 * until customers' tasks had failed on it). A real `mediaforge serve` on each engine.
 */
describe('a key refused at start', () => {
  let proc: MediaforgeProcess | undefined;
  let upstream: JobsProtocolServer | undefined;
  afterEach(async () => {
    await proc?.stop();
    await upstream?.close();
    proc = upstream = undefined;
  });

  it('is down in /readyz and deployments status before any task, and createTask answers 503 with nothing held', async () => {
    upstream = await new JobsProtocolServer({ apiKey: 'sk-upstream-right-key-0123' }).start();
    proc = await startMediaforge(
      'start-probe-down',
      { MEDIAFORGE_DEPLOYMENTS: '$DIR/deployments.yaml', RELAY_KEY: 'sk-upstream-wrong-key-9876' },
      {
        'deployments.yaml': [
          'upstreams:',
          `  relay: { kind: jobs, baseUrl: "${upstream.baseUrl}", secretEnv: RELAY_KEY }`,
          'models:',
          `  ${bodyD().model}: [{ upstream: relay }]`,
        ].join('\n'),
      },
    );
    const { apiKey, accountId } = await proc.account(1000);
    const end = Date.now() + 20_000;
    let relay: Record<string, any> = {};
    while (relay.state !== 'down') {
      if (Date.now() > end) throw new Error(`never down: ${JSON.stringify(relay)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const ready = await call(proc.url, 'GET', '/readyz', apiKey);
      relay = ready.body.deployments.find((d: { name: string }) => d.name === 'relay');
    }
    expect(relay.lastProbe).toMatchObject({ outcome: 'key refused' });
    expect(relay.lastProbe.detail).toContain('401');
    const refused = await call(proc.url, 'POST', '/api/v1/jobs/createTask', apiKey, bodyD('a fox, Picture 1'));
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.body.code).toBe(50301);
    expect(upstream.submits).toHaveLength(0);
    const wallet = await proc.db.kysely
      .selectFrom('wallets')
      .select(['available', 'held'])
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(wallet).toEqual({ available: 1000, held: 0 });
    expect(JSON.stringify(relay)).not.toContain('sk-upstream-wrong-key-9876');
  }, 60_000);
});
