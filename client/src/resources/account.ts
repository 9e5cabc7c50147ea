import type { Core, RequestOptions } from '../core/request.js';
import type { CreditBalance, CurrentKey, Statement, UsageQuery, UsageReport } from '../types.js';

export class Credit {
  constructor(private readonly core: Core) {}

  /** The wallet: available, held and total credits, with USD strings (GET /chat/credit). */
  async get(options: RequestOptions = {}): Promise<CreditBalance> {
    return (
      await this.core.call<CreditBalance>(
        (signal) => this.core.api.GET('/api/v1/chat/credit', { signal }),
        'safe',
        options,
      )
    ).data;
  }
}

export class Usage {
  constructor(private readonly core: Core) {}

  /**
   * Usage by day and by model (GET /usage); `from`/`to` are UTC days, YYYY-MM-DD. `scope: 'account'`
   * counts every key of the account (the key needs the account-reports scope).
   */
  async get(query: Omit<UsageQuery, 'format'> = {}, options: RequestOptions = {}): Promise<UsageReport> {
    return (
      await this.core.call<UsageReport>(
        (signal) => this.core.api.GET('/api/v1/usage', { params: { query: { ...query, format: 'json' } }, signal }),
        'safe',
        options,
      )
    ).data;
  }

  /** The same report as CSV text (`section,key,tasks,credits,cost`). */
  async csv(query: Omit<UsageQuery, 'format'> = {}, options: RequestOptions = {}): Promise<string> {
    return (
      await this.core.call<string>(
        (signal) =>
          this.core.api.GET('/api/v1/usage', {
            params: { query: { ...query, format: 'csv' } },
            headers: { Accept: 'text/csv' },
            parseAs: 'text',
            signal,
          }),
        'safe',
        options,
      )
    ).data;
  }
}

/** The account's monthly statements (the key needs the account-reports scope, off by default). */
export class Statements {
  constructor(private readonly core: Core) {}

  /** The statement of a calendar month in UTC, `YYYY-MM` (GET /statements/{month}). */
  async get(month: string, options: RequestOptions = {}): Promise<Statement> {
    return (
      await this.core.call<Statement>(
        (signal) => this.core.api.GET('/api/v1/statements/{month}', { params: { path: { month } }, signal }),
        'safe',
        options,
      )
    ).data;
  }

  /** The same statement as CSV text (`section,item,credits`). */
  async csv(month: string, options: RequestOptions = {}): Promise<string> {
    return (
      await this.core.call<string>(
        (signal) =>
          this.core.api.GET('/api/v1/statements/{month}', {
            params: { path: { month }, query: { format: 'csv' } },
            headers: { Accept: 'text/csv' },
            parseAs: 'text',
            signal,
          }),
        'safe',
        options,
      )
    ).data;
  }
}

export class Keys {
  constructor(private readonly core: Core) {}

  /** The calling key's policy and what is left of its budget this period (GET /keys/current). */
  async current(options: RequestOptions = {}): Promise<CurrentKey> {
    return (
      await this.core.call<CurrentKey>(
        (signal) => this.core.api.GET('/api/v1/keys/current', { signal }),
        'safe',
        options,
      )
    ).data;
  }
}
