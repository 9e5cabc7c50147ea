import { describe, expect, it } from 'vitest';
import { serviceForSuite } from '../support/suite-service.js';
import { bodyD, checkBalance, expectError } from './helpers.js';

const TYPE_STRING = (field: string) => ({ path: field, rule: 'type', message: `${field} must be of type string.` });
const REQUIRED = (field: string) => ({ path: field, rule: 'required', message: `${field} is required.` });
const UNKNOWN = (field: string) => ({
  path: field,
  rule: 'unknown_field',
  message: `${field} is not accepted by this model.`,
});
const QUOTE_EXPECTED = (field: string, rule: string) => ({
  path: field,
  rule,
  message: `${field} must be a whole number of credits or a USD amount such as "1.25".`,
});

/**
 * The createTask and quote envelope, checked from the contract (CreateTaskRequest, `input` an
 * opaque object) before the handler: the same paths, rules, messages and order as the hand-written
 * checks it replaced (issue 26), for both operations.
 */
describe.each([
  ['createTask', '/api/v1/jobs/createTask'],
  ['quote', '/api/v1/jobs/quote'],
])('the %s envelope', (_operation, path) => {
  const svc = serviceForSuite(100);

  const cases: [string, { given: unknown; want: { path: string; rule: string; message: string }[] }][] = [
    ['an empty model name', { given: { ...bodyD(), model: '' }, want: [TYPE_STRING('model')] }],
    ['a model that is a number', { given: { ...bodyD(), model: 5 }, want: [TYPE_STRING('model')] }],
    ['no model and no input', { given: {}, want: [REQUIRED('model'), REQUIRED('input')] }],
    ['an empty model name and no input', { given: { model: '' }, want: [TYPE_STRING('model'), REQUIRED('input')] }],
    [
      'unknown fields come first',
      {
        given: { callBackUrl: 7, colour: 'red', ...bodyD(), size: 1 },
        want: [UNKNOWN('colour'), UNKNOWN('size'), TYPE_STRING('callBackUrl')],
      },
    ],
    [
      'a quoteId that is not a string',
      { given: { ...bodyD(), quoteId: 1, expectedCredits: 1 }, want: [TYPE_STRING('quoteId')] },
    ],
    [
      'a negative expectedCredits',
      { given: { ...bodyD(), quoteId: 'q', expectedCredits: -1 }, want: [QUOTE_EXPECTED('expectedCredits', 'type')] },
    ],
    [
      'a fractional expectedCredits',
      { given: { ...bodyD(), quoteId: 'q', expectedCredits: 1.5 }, want: [QUOTE_EXPECTED('expectedCredits', 'type')] },
    ],
    [
      'an expectedCredits beyond a safe integer',
      {
        given: { ...bodyD(), quoteId: 'q', expectedCredits: 2 ** 60 },
        want: [QUOTE_EXPECTED('expectedCredits', 'type')],
      },
    ],
    [
      'expectedCredits as text',
      { given: { ...bodyD(), quoteId: 'q', expectedCredits: '5' }, want: [QUOTE_EXPECTED('expectedCredits', 'type')] },
    ],
    [
      'an expectedCost that is a number',
      { given: { ...bodyD(), quoteId: 'q', expectedCost: 5 }, want: [QUOTE_EXPECTED('expectedCost', 'pattern')] },
    ],
    [
      'an expectedCost with three decimals',
      { given: { ...bodyD(), quoteId: 'q', expectedCost: '1.234' }, want: [QUOTE_EXPECTED('expectedCost', 'pattern')] },
    ],
    [
      'an expectedCost with a leading zero',
      { given: { ...bodyD(), quoteId: 'q', expectedCost: '01.00' }, want: [QUOTE_EXPECTED('expectedCost', 'pattern')] },
    ],
    [
      'every envelope problem at once, in field order',
      {
        given: { model: '', quoteId: 2, expectedCredits: -1, expectedCost: 'x', callBackUrl: false, extra: 1 },
        want: [
          UNKNOWN('extra'),
          TYPE_STRING('model'),
          REQUIRED('input'),
          TYPE_STRING('callBackUrl'),
          TYPE_STRING('quoteId'),
          QUOTE_EXPECTED('expectedCredits', 'type'),
          QUOTE_EXPECTED('expectedCost', 'pattern'),
        ],
      },
    ],
    [
      'a body that is not an object',
      { given: [bodyD()], want: [{ path: 'body', rule: 'type', message: 'body must be of type object.' }] },
    ],
  ];

  it.each(cases)('%s is 400 40001 with exactly these problems', async (_name, { given, want }) => {
    const r = await svc.t.call('POST', path, { key: svc.account.apiKey, body: given });
    expectError(r, 400, 40001);
    expect(r.body.data.errors).toEqual(want);
    expect(r.body.data.errors.length).toBeGreaterThan(0);
    await checkBalance(svc.t, svc.account.accountId, svc.account.apiKey, { available: 100, held: 0 });
  });

  // usdToCredits' own forms pass the envelope: the request reaches the quote check (a bogus quote id).
  it.each([['3'], ['0.5'], ['12.34'], ['0']])('expectedCost %s passes the envelope', async (expectedCost) => {
    const r = await svc.t.call('POST', path, {
      key: svc.account.apiKey,
      body: { ...bodyD(), quoteId: 'q1.x.y', expectedCost },
    });
    if (path.endsWith('/quote')) expect(r.status).toBe(200);
    else expectError(r, 409, 40901);
  });
});
