/**
 * `mediaforge usage export` (issue 39 point 7): every account's charged tasks of a period, as CSV
 * or as FinOps FOCUS 1.0 columns, run as an operator runs it (bin/mediaforge.js, a process of its
 * own) on the database of a running service; bad flags refused before anything is read or audited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FOCUS_COLUMNS } from '../../runtime/reports/usage-export.js';
import { bodyD, createTask, PRICE_D } from '../http/helpers.js';
import { mediaforgeCli } from '../support/cli-process.js';
import { startTestService, waitForTerminal, type TestService } from '../support/service.js';

let t: TestService;
const tasks: { taskId: string; accountId: string }[] = [];

const cli = (args: string[]) => mediaforgeCli(t.config.dbUrl, args);

/** The CSV's rows as records by its header (the export writes no quoted field here). */
function rows(csv: string): Record<string, string>[] {
  const [header, ...lines] = csv.trimEnd().split('\r\n');
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i], value])));
}

const today = () => new Date().toISOString().slice(0, 10);
/** The day before today (UTC): a period from it to today holds the tasks even if the run crosses midnight. */
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

async function exportAudits(): Promise<{ action: string; details: Record<string, unknown> }[]> {
  const r = await cli(['audit', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).entries.filter((e: { action: string }) => e.action === 'usage.export');
}

beforeAll(async () => {
  t = await startTestService();
  for (const credits of [100, 200]) {
    const { accountId, apiKey } = await t.account(credits);
    const created = await createTask(t, apiKey, bodyD('a lighthouse at dusk'));
    expect(created.status).toBe(202);
    await waitForTerminal(t, apiKey, created.body.data.taskId);
    tasks.push({ taskId: created.body.data.taskId, accountId });
  }
}, 60_000);
afterAll(async () => t?.close());

describe('mediaforge usage export', () => {
  it('csv: one row per charged task of the period, its account, model, billed seconds and credits', async () => {
    const r = await cli(['usage', 'export', '--from', yesterday(), '--to', today()]);
    expect(r.code, r.stderr).toBe(0);
    const exported = rows(r.stdout);
    expect(exported.map((row) => row.task_id).sort()).toEqual(tasks.map((task) => task.taskId).sort());
    for (const row of exported) {
      expect(row).toMatchObject({ model: bodyD().model, billed_seconds: '5', credits: String(PRICE_D) });
      expect(row.account_id).toBe(tasks.find((task) => task.taskId === row.task_id)!.accountId);
    }
  });

  it('focus: the FOCUS 1.0 columns, costs at the declared value of a credit, seconds consumed, the account as sub-account', async () => {
    const r = await cli([
      'usage',
      'export',
      '--from',
      yesterday(),
      '--to',
      today(),
      '--format',
      'focus',
      '--currency',
      'EUR',
      '--credit-value',
      '0.015',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\r\n')[0]).toBe(FOCUS_COLUMNS.join(','));
    const exported = rows(r.stdout);
    expect(exported).toHaveLength(tasks.length);
    for (const row of exported) {
      const task = tasks.find((x) => x.taskId === row.ResourceId)!;
      expect(row).toMatchObject({
        BilledCost: '0.42', // 28 credits at 0.015 EUR
        EffectiveCost: '0.42',
        BillingCurrency: 'EUR',
        ChargeCategory: 'Usage',
        ConsumedQuantity: '5',
        ConsumedUnit: 'Seconds',
        SkuId: bodyD().model,
        SubAccountId: task.accountId,
        x_Credits: String(PRICE_D),
      });
      expect(Date.parse(row.ChargePeriodStart!)).toBeLessThanOrEqual(Date.parse(row.ChargePeriodEnd!));
    }
  });

  it('a period before the tasks exports the header alone, and each export is audited with its row count', async () => {
    const r = await cli(['usage', 'export', '--from', '2020-01-01', '--to', '2020-12-31']);
    expect(r.code, r.stderr).toBe(0);
    expect(rows(r.stdout)).toEqual([]);
    const audits = await exportAudits();
    expect(audits.map((a) => a.details)).toContainEqual({
      from: '2020-01-01',
      to: '2020-12-31',
      format: 'csv',
      rows: 0,
    });
    expect(audits.map((a) => a.details)).toContainEqual({ from: yesterday(), to: today(), format: 'csv', rows: 2 });
  });

  it.each([
    [
      'a day that does not exist',
      { given: ['--from', '2026-02-30', '--to', '2026-03-01'], want: /--from must be a day as YYYY-MM-DD/ },
    ],
    [
      'an end before the start',
      { given: ['--from', '2026-03-02', '--to', '2026-03-01'], want: /--to must be the same day as --from or later/ },
    ],
    [
      'an unknown layout',
      {
        given: ['--from', '2026-03-01', '--to', '2026-03-01', '--format', 'xml'],
        want: /--format must be csv or focus/,
      },
    ],
    [
      'focus without a currency',
      {
        given: ['--from', '2026-03-01', '--to', '2026-03-01', '--format', 'focus', '--credit-value', '1'],
        want: /--currency/,
      },
    ],
    [
      'focus with a value in floating notation',
      {
        given: [
          '--from',
          '2026-03-01',
          '--to',
          '2026-03-01',
          '--format',
          'focus',
          '--currency',
          'USD',
          '--credit-value',
          '1e-2',
        ],
        want: /--credit-value/,
      },
    ],
  ])('refuses %s, writing nothing and auditing nothing', async (_name, { given, want }) => {
    const before = (await exportAudits()).length;
    const r = await cli(['usage', 'export', ...given]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(want);
    expect((await exportAudits()).length).toBe(before);
  });
});
