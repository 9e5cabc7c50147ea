import { catalogue, type ModelInfo } from '../../../generated/catalogue.js';
import type { Handlers } from '../../../generated/routes.js';
import { pricingUnderBook } from '../../accounts/book-price.js';
import { ApiError } from '../../errors.js';
import type { ApiRequests } from '../api-request.js';

/** A model's info for the calling key: its account's price book's prices (pricingUnderBook). */
function summary(info: ModelInfo, withSchema: boolean, book: string | null) {
  const { inputSchema, ...rest } = info;
  const priced = { ...rest, pricing: pricingUnderBook(info.id, info.pricing, book) };
  return withSchema ? { ...priced, inputSchema } : priced;
}

export const modelHandlers: Pick<Handlers<ApiRequests>, 'listModels' | 'getModel'> = {
  async listModels(req) {
    const flag = req.query.includeSchema;
    const withSchema = flag === '1' || flag === 'true';
    const items = [...catalogue.values()]
      .filter((m) => req.ctx.deployments.serves(m.info))
      .map((m) => summary(m.info, withSchema, req.caller.priceBook));
    return { status: 200, data: { items } };
  },

  async getModel(req) {
    // Either /models/<vendor>%2F<family>%2F<mode> (one encoded segment) or the plain path (the route's spansSegments).
    const raw = req.params.model;
    let id = raw;
    try {
      id = decodeURIComponent(raw);
    } catch {
      throw new ApiError('model_not_found', { param: 'model' });
    }
    const model = catalogue.get(id);
    if (!model) throw new ApiError('model_not_found', { param: 'model' });
    return { status: 200, data: summary(model.info, true, req.caller.priceBook) };
  },
};
