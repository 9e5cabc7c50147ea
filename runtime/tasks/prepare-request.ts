import { catalogue, type CatalogueModel } from '../../generated/catalogue.js';
import {
  usdToCredits,
  type FieldIssue,
  type PriceFacts,
  type PriceResult,
  type Warning,
} from '../../generated/support.js';
import type { Caller } from '../accounts/accounts.js';
import { ApiError, fieldIssue, invalidInput } from '../errors.js';
import { requestFingerprint } from '../idempotency/fingerprint.js';
import { verifyQuote } from '../quotes/quotes.js';
import type { OutboundPolicy } from '../net/address-policy.js';
import { checkCallbackUrl } from './callback-url.js';
import { sourceClipFacts, type SourceClipLookup } from './source-clip.js';

const BODY_FIELDS = new Set(['model', 'input', 'callBackUrl', 'quoteId', 'expectedCredits', 'expectedCost']);

/** A create or quote request, checked against the model's published limits and priced. */
export interface PreparedRequest {
  model: CatalogueModel;
  input: Record<string, unknown>;
  callbackUrl: string | null;
  price: PriceResult;
  /** What the price knew beyond the input (a source clip's length); re-pricing merges its own facts into these. */
  facts: PriceFacts;
  warnings: Warning[];
  fingerprint: string;
  quote?: { quoteId: string; expectedCredits: number };
}

/**
 * Parses the body of createTask / quote: the envelope fields first, then the model's generated
 * validator. `sourceClips` looks up a task named as a model's source clip (same API key only);
 * without it such a task id is refused as unknown.
 */
export async function prepareRequest(
  body: unknown,
  policy: OutboundPolicy,
  sourceClips?: SourceClipLookup,
): Promise<PreparedRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidInput([fieldIssue('body', 'type', 'type', { type: 'object' })]);
  }
  const b = body as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(b))
    if (!BODY_FIELDS.has(key)) issues.push(fieldIssue(key, 'unknown_field', 'unknown_field'));
  if (typeof b.model !== 'string' || b.model.length === 0)
    issues.push(
      fieldIssue('model', b.model === undefined ? 'required' : 'type', b.model === undefined ? 'required' : 'type', {
        type: 'string',
      }),
    );
  if (b.input === undefined) issues.push(fieldIssue('input', 'required', 'required'));
  if (b.callBackUrl !== undefined && typeof b.callBackUrl !== 'string')
    issues.push(fieldIssue('callBackUrl', 'type', 'type', { type: 'string' }));
  if (b.quoteId !== undefined && typeof b.quoteId !== 'string')
    issues.push(fieldIssue('quoteId', 'type', 'type', { type: 'string' }));
  if (
    b.expectedCredits !== undefined &&
    !(Number.isSafeInteger(b.expectedCredits) && (b.expectedCredits as number) >= 0)
  ) {
    issues.push(fieldIssue('expectedCredits', 'type', 'quote_expected'));
  }
  if (
    b.expectedCost !== undefined &&
    (typeof b.expectedCost !== 'string' || usdToCredits(b.expectedCost) === undefined)
  ) {
    issues.push(fieldIssue('expectedCost', 'pattern', 'quote_expected'));
  }
  if (issues.length) throw invalidInput(issues);

  const model = catalogue.get(b.model as string);
  if (!model) throw new ApiError('unknown_model', { params: { model: String(b.model).slice(0, 200) }, param: 'model' });
  const validated = model.validate(b.input);
  if (!validated.ok) throw invalidInput(validated.errors);
  const callbackUrl = (b.callBackUrl as string | undefined) ?? null;
  if (callbackUrl !== null) await checkCallbackUrl(callbackUrl, policy);
  const facts = await sourceClipFacts(model, validated.value, sourceClips);

  const quoteFields = [b.quoteId, b.expectedCredits ?? b.expectedCost].filter((v) => v !== undefined).length;
  if (quoteFields === 1)
    throw new ApiError('quote_incomplete', { param: b.quoteId === undefined ? 'quoteId' : 'expectedCredits' });
  const expectedCredits =
    b.expectedCredits !== undefined
      ? (b.expectedCredits as number)
      : b.expectedCost !== undefined
        ? usdToCredits(b.expectedCost as string)!
        : undefined;
  return {
    model,
    input: validated.value,
    callbackUrl,
    price: model.price(validated.value, facts),
    facts,
    warnings: model.warnings(validated.value),
    fingerprint: requestFingerprint(model.info.id, validated.value, callbackUrl),
    quote: b.quoteId !== undefined ? { quoteId: b.quoteId as string, expectedCredits: expectedCredits! } : undefined,
  };
}

/** A quote sent with createTask must be ours, unexpired, this key's, for this request and at this price. */
export function checkQuote(secret: string, caller: Caller, request: PreparedRequest, now: number): void {
  if (!request.quote) return;
  const claims = verifyQuote(secret, request.quote.quoteId);
  const valid =
    claims !== undefined &&
    claims.expiresAt > now &&
    claims.accountId === caller.accountId &&
    claims.keyId === caller.keyId &&
    claims.fingerprint === request.fingerprint &&
    claims.estimatedCredits === request.quote.expectedCredits &&
    claims.estimatedCredits === request.price.estimatedCredits &&
    claims.maxCredits === request.price.maxCredits;
  if (!valid) throw new ApiError('quote_conflict', { param: 'quoteId' });
}
