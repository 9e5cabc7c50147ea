import ipaddr from 'ipaddr.js';
import { ApiError } from '../errors.js';
import { modelMatches } from '../../generated/support.js';

/**
 * What one API key may do (issue 40): a budget per UTC period, the models it may call, the most
 * tasks it may have in flight, when it expires, the client networks it may be used from. Every
 * part is optional; a key without any is as keys always were. Stored on the key's row (migration
 * 0023); the budget's counter is a key_spend row written by ledger/key-spend.ts.
 */
export type BudgetPeriod = 'day' | 'week' | 'month' | 'lifetime';
export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month', 'lifetime'];

/** A budget's alert thresholds (`key.budget_threshold`) when its policy names none: percent of its credits. */
export const DEFAULT_BUDGET_ALERTS: readonly number[] = [80, 100];

export interface KeyPolicy {
  /** `alerts`: the thresholds in percent of `credits` (1..100, ascending), present only when set; else DEFAULT_BUDGET_ALERTS. */
  budget: { credits: number; period: BudgetPeriod; alerts?: number[] } | null;
  /** Model ids and family patterns (`<vendor>/*`); null: any model. */
  models: string[] | null;
  maxTasksInFlight: number | null;
  /** Milliseconds since the epoch; null: never. */
  expiresAt: number | null;
  /** CIDR blocks; null: any address. */
  networks: string[] | null;
}

export const NO_POLICY: KeyPolicy = {
  budget: null,
  models: null,
  maxTasksInFlight: null,
  expiresAt: null,
  networks: null,
};

/**
 * Whether the policy limits anything (every part null is a key as keys always were). Read through
 * the stored columns, as samePolicy, so a part added to the policy is never forgotten here.
 */
export function hasPolicy(policy: KeyPolicy): boolean {
  return !samePolicy(policy, NO_POLICY);
}

/** Whether two policies store the same columns (a change that changes nothing writes nothing). */
export function samePolicy(a: KeyPolicy, b: KeyPolicy): boolean {
  return JSON.stringify(rowOfPolicy(a)) === JSON.stringify(rowOfPolicy(b));
}

/** The policy columns of api_keys. */
export interface KeyPolicyColumns {
  budget_credits: number | null;
  budget_period: string | null;
  budget_alerts: string | null;
  allowed_models: string | null;
  max_in_flight: number | null;
  expires_at: number | null;
  networks: string | null;
}

export const KEY_POLICY_COLUMNS = [
  'budget_credits',
  'budget_period',
  'budget_alerts',
  'allowed_models',
  'max_in_flight',
  'expires_at',
  'networks',
] as const satisfies readonly (keyof KeyPolicyColumns)[];

export function policyOfRow(row: KeyPolicyColumns): KeyPolicy {
  if (
    row.budget_credits === null &&
    row.allowed_models === null &&
    row.max_in_flight === null &&
    row.expires_at === null &&
    row.networks === null
  )
    return NO_POLICY;
  return {
    budget:
      row.budget_credits === null
        ? null
        : {
            credits: Number(row.budget_credits),
            period: (row.budget_period ?? 'lifetime') as BudgetPeriod,
            ...(row.budget_alerts === null ? {} : { alerts: JSON.parse(row.budget_alerts) as number[] }),
          },
    models: row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]),
    maxTasksInFlight: row.max_in_flight === null ? null : Number(row.max_in_flight),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    networks: row.networks === null ? null : (JSON.parse(row.networks) as string[]),
  };
}

export function rowOfPolicy(policy: KeyPolicy): KeyPolicyColumns {
  return {
    budget_credits: policy.budget?.credits ?? null,
    budget_period: policy.budget?.period ?? null,
    budget_alerts: policy.budget?.alerts ? JSON.stringify(policy.budget.alerts) : null,
    allowed_models: policy.models === null ? null : JSON.stringify(policy.models),
    max_in_flight: policy.maxTasksInFlight,
    expires_at: policy.expiresAt,
    networks: policy.networks === null ? null : JSON.stringify(policy.networks),
  };
}

const DAY_MS = 24 * 3600 * 1000;

/** The UTC period `now` falls in: [start, end); `lifetime` starts at 0 and never ends (end null). */
export function budgetPeriodAt(period: BudgetPeriod, now: number): { start: number; end: number | null } {
  const d = new Date(now);
  switch (period) {
    case 'day': {
      const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      return { start, end: start + DAY_MS };
    }
    case 'week': {
      // Weeks start on Monday (ISO 8601): getUTCDay() is 0 on Sunday.
      const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      const start = day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
      return { start, end: start + 7 * DAY_MS };
    }
    case 'month':
      return {
        start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
        end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
      };
    case 'lifetime':
      return { start: 0, end: null };
  }
}

/** Whole-segment patterns are catalogue-core's (model-patterns.ts): price books read them the same way. */
export { modelMatches };

export function modelAllowed(policy: KeyPolicy, modelId: string): boolean {
  return policy.models === null || policy.models.some((entry) => modelMatches(entry, modelId));
}

/** 403 40330 when the key's allow-list leaves the model out. */
export function refuseModelNotAllowed(policy: KeyPolicy, modelId: string): void {
  if (!modelAllowed(policy, modelId)) throw new ApiError('model_not_allowed', { params: { model: modelId } });
}

/** Whether the address is in one of the blocks (IPv4-mapped IPv6 addresses count as IPv4). */
export function addressAllowed(networks: readonly string[], ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.process(ip);
  return networks.some((block) => {
    const [range, bits] = ipaddr.parseCIDR(block);
    const normalized = range.kind() === 'ipv6' ? ipaddr.process(range.toString()) : range;
    if (address.kind() !== normalized.kind()) return false;
    return address.match(normalized, normalized.kind() === range.kind() ? bits : bits - 96);
  });
}

/**
 * What is checked at authentication on every Bearer operation: an expired key is 401 40120, a
 * client outside the key's networks (its address as MEDIAFORGE_TRUSTED_PROXIES resolves it) 403 40331.
 */
export function refuseAtAuthentication(policy: KeyPolicy, now: number, clientIp: string): void {
  if (policy.expiresAt !== null && now >= policy.expiresAt)
    throw new ApiError('key_expired', { params: { expiresAt: new Date(policy.expiresAt).toISOString() } });
  if (policy.networks !== null && !addressAllowed(policy.networks, clientIp)) throw new ApiError('network_not_allowed');
}

/** 402 40203: the budget's words (what is left of it and when its period ends). */
export function budgetExceeded(policy: KeyPolicy, required: number, used: number, now: number): ApiError {
  const budget = policy.budget!;
  const { end } = budgetPeriodAt(budget.period, now);
  return new ApiError('key_budget_exceeded', {
    params: {
      required,
      remaining: Math.max(0, budget.credits - used),
      budget: budget.credits,
      period: budget.period,
      periodEnd: end === null ? '∞' : new Date(end).toISOString(),
    },
  });
}

/** Seconds a capped key is told to wait before another createTask (429 42902's Retry-After). */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 5;

export function inFlightCapReached(inFlight: number): ApiError {
  const seconds = String(IN_FLIGHT_RETRY_AFTER_SECONDS);
  return new ApiError('key_in_flight_cap', {
    params: { inFlight, retryAfter: seconds },
    headers: { 'Retry-After': seconds },
  });
}

/** Why a policy given by an owner or operator is refused: the field and the reason, in English (the CLI's and console's words). */
export class KeyPolicyInputError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/** A policy as people write it (CLI flags, the console's form); every field optional, null clears it. */
export interface KeyPolicyInput {
  /** `5000/month`, `100/day`, `2000/week`, `10000/lifetime` (or `10000`: lifetime). */
  budget?: string | null;
  /** The budget's alert thresholds in percent (`50,80,100`); null: the default 80 and 100. */
  budgetAlerts?: readonly number[] | null;
  models?: readonly string[] | null;
  maxTasksInFlight?: number | null;
  /** An ISO 8601 date or date-time (a date is its UTC midnight). */
  expires?: string | null;
  networks?: readonly string[] | null;
}

const MODEL_ENTRY = /^[a-z0-9][a-z0-9._-]*(\/([a-z0-9][a-z0-9._-]*|\*))*$|^\*$/i;

/**
 * The policy `input` makes of `current` at `now` (an expiry must lie after it); throws
 * KeyPolicyInputError naming the field.
 */
export function applyPolicyInput(current: KeyPolicy, input: KeyPolicyInput, now: number): KeyPolicy {
  if (Object.keys(input).length === 0) return current;
  const next: KeyPolicy = { ...current };
  if (input.budget !== undefined)
    next.budget =
      input.budget === null
        ? null
        : { ...parseBudget(input.budget), ...(current.budget?.alerts ? { alerts: current.budget.alerts } : {}) };
  if (input.budgetAlerts !== undefined) {
    if (next.budget === null)
      throw new KeyPolicyInputError('budgetAlerts', 'a key without a budget has no budget alerts');
    const { alerts: _previous, ...budget } = next.budget;
    next.budget = input.budgetAlerts === null ? budget : { ...budget, alerts: parseBudgetAlerts(input.budgetAlerts) };
  }
  if (input.models !== undefined) {
    if (input.models === null) next.models = null;
    else {
      if (input.models.length === 0 || input.models.length > 100)
        throw new KeyPolicyInputError('models', 'between 1 and 100 entries');
      for (const entry of input.models)
        if (!MODEL_ENTRY.test(entry) || entry.length > 200)
          throw new KeyPolicyInputError('models', `"${entry}" is neither a model id nor a pattern of whole segments`);
      next.models = [...input.models];
    }
  }
  if (input.maxTasksInFlight !== undefined) {
    if (
      input.maxTasksInFlight !== null &&
      (!Number.isSafeInteger(input.maxTasksInFlight) || input.maxTasksInFlight < 1)
    )
      throw new KeyPolicyInputError('maxTasksInFlight', 'a positive whole number');
    next.maxTasksInFlight = input.maxTasksInFlight;
  }
  if (input.expires !== undefined) next.expiresAt = input.expires === null ? null : parseExpiry(input.expires, now);
  if (input.networks !== undefined) {
    if (input.networks === null) next.networks = null;
    else {
      if (input.networks.length === 0 || input.networks.length > 100)
        throw new KeyPolicyInputError('networks', 'between 1 and 100 CIDR blocks');
      for (const block of input.networks)
        if (!ipaddr.isValidCIDR(block)) throw new KeyPolicyInputError('networks', `"${block}" is not a CIDR block`);
      next.networks = [...input.networks];
    }
  }
  return next;
}

function parseBudget(text: string): NonNullable<KeyPolicy['budget']> {
  const match = /^(\d{1,15})(?:\/(day|week|month|lifetime))?$/.exec(text.trim());
  const credits = match ? Number(match[1]) : Number.NaN;
  if (!match || !Number.isSafeInteger(credits) || credits < 1)
    throw new KeyPolicyInputError(
      'budget',
      'CREDITS/PERIOD: a positive whole number of credits per day, week, month or lifetime',
    );
  return { credits, period: (match[2] ?? 'lifetime') as BudgetPeriod };
}

function parseBudgetAlerts(percents: readonly number[]): number[] {
  if (
    percents.length === 0 ||
    percents.length > 10 ||
    !percents.every((p) => Number.isSafeInteger(p) && p >= 1 && p <= 100)
  )
    throw new KeyPolicyInputError('budgetAlerts', 'between 1 and 10 whole percents of the budget, 1 to 100');
  return [...new Set(percents)].sort((a, b) => a - b);
}

function parseExpiry(text: string, now: number): number {
  const t = text.trim();
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(t)
    ? Date.parse(`${t}T00:00:00Z`)
    : /^\d{4}-\d{2}-\d{2}T/.test(t)
      ? Date.parse(t)
      : NaN;
  if (!Number.isFinite(ms)) throw new KeyPolicyInputError('expires', 'an ISO 8601 date or date-time');
  // A key that expired when it was given its expiry is a revoked key by mistake: refused, not stored.
  if (ms <= now) throw new KeyPolicyInputError('expires', 'a date or date-time in the future');
  return ms;
}

/** The policy as the API shows it (GET /api/v1/keys/current, the console). */
export function policyView(policy: KeyPolicy) {
  return {
    budget: policy.budget,
    models: policy.models,
    maxTasksInFlight: policy.maxTasksInFlight,
    expiresAt: policy.expiresAt === null ? null : new Date(policy.expiresAt).toISOString(),
    networks: policy.networks,
  };
}
