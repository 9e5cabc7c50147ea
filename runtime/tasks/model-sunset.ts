import type { ModelInfo } from '../../generated/catalogue.js';
import type { Warning } from '../../generated/support.js';
import { ApiError } from '../errors.js';

/**
 * A model being retired (its YAML's `deprecated` block): before its sunset date it is accepted
 * with the warning `model_deprecated`; from 00:00 UTC of that date on it is refused with 410
 * `model_retired`, naming the replacement, before anything is held.
 */
export function modelSunset(info: Pick<ModelInfo, 'id' | 'deprecated'>, now: number): Warning | undefined {
  const deprecated = info.deprecated;
  if (!deprecated) return undefined;
  const params = { model: info.id, sunset: deprecated.sunset, replacement: deprecated.replacement };
  if (now >= Date.parse(`${deprecated.sunset}T00:00:00Z`))
    throw new ApiError('model_retired', { params, param: 'model' });
  return { code: 'model_deprecated', path: 'model', message: { key: 'model_deprecated', params } };
}

/**
 * Applies the sunset to a prepared request: throws once retired, else adds the warning once. createTask
 * and retry call it just before the hold (acceptTask's beforeHold), so that a replayed
 * Idempotency-Key still returns its original task after the sunset; quote calls it directly.
 */
export function applyModelSunset(
  request: { model: { info: Pick<ModelInfo, 'id' | 'deprecated'> }; warnings: Warning[] },
  now: number,
): void {
  const warning = modelSunset(request.model.info, now);
  if (warning && !request.warnings.some((w) => w.code === warning.code)) request.warnings.unshift(warning);
}
