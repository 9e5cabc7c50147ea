/*
 * generated/catalogue.ts: the one registry the runtime asks about a model: its public info
 * (GET /models; generated/model-info.ts), its validator, its price function and its marker checker.
 */
import { checkMarkers } from '../markers/template.js';
import { prices } from '../prices/template.js';
import type { PriceFacts, PriceResult, ValidationResult, Warning } from '../support/template.js';
import { validators } from '../validators/index-template.js';
import { MODEL_INFO, type ModelInfo } from './model-info-template.js';

export type { ModelInfo };

export interface CatalogueModel {
  info: ModelInfo;
  /** Checks an input against the model's published limits; returns it normalized (defaults filled in). */
  validate(input: unknown): ValidationResult;
  /** Prices a normalized input; facts (measured lengths) refine it at settlement. */
  price(input: Record<string, unknown>, facts?: PriceFacts): PriceResult;
  /** Prompt-marker warnings for a normalized input. */
  warnings(input: Record<string, unknown>): Warning[];
}

/** Every callable model, by id, in id order. */
export const catalogue: ReadonlyMap<string, CatalogueModel> = new Map(
  MODEL_INFO.map((info) => [
    info.id,
    {
      info,
      validate: validators.get(info.id)!,
      price: prices.get(info.id)!,
      warnings: (input: Record<string, unknown>) => checkMarkers(info.markerStyle, input, info.referenceFields),
    },
  ]),
);
