import { catalogue, type CatalogueModel } from '../../generated/catalogue.js';
import { usdToCredits, type PriceFacts, type PriceResult, type Warning } from '../../generated/support.js';
import type { Caller } from '../accounts/accounts.js';
import { ApiError, invalidInput } from '../errors.js';
import { requestFingerprint } from '../idempotency/fingerprint.js';
import { verifyQuote } from '../quotes/quotes.js';
import type { OutboundPolicy } from '../net/address-policy.js';
import { priceUnderBook } from '../accounts/book-price.js';
import { checkCallbackUrl } from './callback-url.js';
import { sourceClipFacts, type SourceClipLookup } from './source-clip.js';

/** A create or quote request, checked against the model's published limits and priced. */
export interface PreparedRequest {
  model: CatalogueModel;
  input: Record<string, unknown>;
  callbackUrl: string | null;
  price: PriceResult;
  /** The price book the price is at (the caller's account's; null: the published catalogue); a task keeps it. */
  priceBook: string | null;
  /** What the price knew beyond the input (a source clip's length); re-pricing merges its own facts into these. */
  facts: PriceFacts;
  warnings: Warning[];
  fingerprint: string;
  quote?: { quoteId: string; expectedCredits: number };
}

/**
 * The body of createTask / quote as the contract has already checked it before the handler
 * (generated/requests/: the envelope, `input` an opaque object, the quote fields' forms).
 */
export interface RequestEnvelope {
  model: string;
  input: Record<string, unknown>;
  callBackUrl?: string;
  quoteId?: string;
  expectedCredits?: number;
  expectedCost?: string;
}

/**
 * Prepares a checked envelope: the model's generated validator on `input`, the callback URL, the
 * price. `sourceClips` looks up a task named as a model's source clip (same API key only);
 * without it such a task id is refused as unknown. `priceBook` is the caller's account's (Caller.priceBook).
 */
export async function prepareRequest(
  body: RequestEnvelope,
  policy: OutboundPolicy,
  sourceClips: SourceClipLookup | undefined,
  priceBook: string | null,
): Promise<PreparedRequest> {
  const model = catalogue.get(body.model);
  if (!model) throw new ApiError('unknown_model', { params: { model: body.model.slice(0, 200) }, param: 'model' });
  const validated = model.validate(body.input);
  if (!validated.ok) throw invalidInput(validated.errors);
  const callbackUrl = body.callBackUrl ?? null;
  if (callbackUrl !== null) await checkCallbackUrl(callbackUrl, policy);
  const facts = await sourceClipFacts(model, validated.value, sourceClips);

  const quoteFields = [body.quoteId, body.expectedCredits ?? body.expectedCost].filter((v) => v !== undefined).length;
  if (quoteFields === 1)
    throw new ApiError('quote_incomplete', { param: body.quoteId === undefined ? 'quoteId' : 'expectedCredits' });
  // The contract's pattern for expectedCost is usdToCredits' own: a checked amount always converts.
  const expectedCredits =
    body.expectedCredits ?? (body.expectedCost !== undefined ? usdToCredits(body.expectedCost) : undefined);
  return {
    model,
    input: validated.value,
    callbackUrl,
    price: priceUnderBook(model, validated.value, facts, priceBook),
    priceBook,
    facts,
    warnings: model.warnings(validated.value),
    fingerprint: requestFingerprint(model.info.id, validated.value, callbackUrl),
    quote: body.quoteId !== undefined ? { quoteId: body.quoteId, expectedCredits: expectedCredits! } : undefined,
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
