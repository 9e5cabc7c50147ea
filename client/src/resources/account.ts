import type { Core, RequestOptions } from '../core/request.js';
import type { CreditBalance, CurrentKey, UsageQuery, UsageReport } from '../types.js';

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

  /** The calling key's usage by day and by model (GET /usage); `from`/`to` are UTC days, YYYY-MM-DD. */
  async get(query: UsageQuery = {}, options: RequestOptions = {}): Promise<UsageReport> {
    return (
      await this.core.call<UsageReport>(
        (signal) => this.core.api.GET('/api/v1/usage', { params: { query }, signal }),
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
