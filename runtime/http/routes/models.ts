import { catalogue, type ModelInfo } from '../../../generated/catalogue.js';
import type { Handlers } from '../../../generated/routes.js';
import { ApiError } from '../../errors.js';
import type { ApiRequest } from '../api-request.js';

function summary(info: ModelInfo, withSchema: boolean) {
  const { inputSchema, ...rest } = info;
  return withSchema ? { ...rest, inputSchema } : rest;
}

export const modelHandlers: Pick<Handlers<ApiRequest>, 'listModels' | 'getModel'> = {
  async listModels(req) {
    const flag = req.query('includeSchema');
    const withSchema = flag === '1' || flag === 'true';
    const items = [...catalogue.values()].filter((m) => req.ctx.deployments.pick(m.info)).map((m) => summary(m.info, withSchema));
    return { status: 200, data: { items } };
  },

  async getModel(req) {
    // Either /models/<vendor>%2F<family>%2F<mode> (one encoded segment) or the plain path (wildcard route).
    const raw = req.param('model') || req.param('*');
    let id = raw;
    try {
      id = decodeURIComponent(raw);
    } catch {
      throw new ApiError('model_not_found', {}, [], 'model');
    }
    const model = catalogue.get(id);
    if (!model) throw new ApiError('model_not_found', {}, [], 'model');
    return { status: 200, data: summary(model.info, true) };
  },
};
