import type { Model } from '../../load/types.js';
import { chargeCredits } from '../../../catalogue-core/money.js';

/** The public description of a model: what GET /models returns and what the docs show. */
export function modelInfo(model: Model) {
  const minimum = Math.min(...model.pricing.rates.map((r) => chargeCredits(r.rateHundredths, 5)));
  // The rates a task without any optional reference list can get: a rate that needs a pricing option
  // set by a non-empty list (with_video: a reference video given) is left out. What the playground
  // says "from" (issue 28: "from 9" for a model that costs 19 without a reference video).
  const needsList = new Set(model.pricing.options.filter((o) => o.nonEmpty).map((o) => o.name));
  const withoutLists = model.pricing.rates.filter((r) =>
    Object.entries(r.when).every(([name, value]) => !(needsList.has(name) && value === true)),
  );
  const minimumWithoutReferences = Math.min(
    ...(withoutLists.length ? withoutLists : model.pricing.rates).map((r) => chargeCredits(r.rateHundredths, 5)),
  );
  return {
    id: model.id,
    mode: model.mode,
    modeDescription: model.modeDescription,
    vendor: model.vendor,
    family: model.family,
    title: model.title,
    summary: model.summary,
    docsPath: `/docs/models/${model.id}.html`,
    markerStyle: model.markers.name,
    markerDescription: model.markers.description,
    markerExample: model.markers.example,
    referenceFields: model.fields.filter((f) => f.reference).map((f) => [f.name, f.reference!] as [string, string]),
    referenceLimits: model.references,
    rules: model.rules,
    pricing: {
      unit: 'credits_per_second' as const,
      options: model.pricing.options.map((o) => o.name),
      rates: model.pricing.rates.map((r) => ({ options: r.when, rate: r.rate, rateHundredths: r.rateHundredths })),
      fixedOptions: model.pricing.fixedOptions,
      referenceClips: model.pricing.referenceClips ?? null,
      sourceClip: model.pricing.sourceClip ?? null,
      minimumFor5sCredits: minimum,
      minimumFor5sWithoutReferencesCredits: minimumWithoutReferences,
    },
    outputSizes: model.outputSizes?.table ?? null,
    output: {
      frameRate: model.output.frameRate,
      frameRatePublished: model.output.frameRatePublished,
      containers: Object.fromEntries(
        model.output.containers.map(({ name, label, mime, extension, brands }) => [
          name,
          { label, mime, extension, brands },
        ]),
      ),
      defaultContainer: model.output.defaultContainer,
      lastFrame: model.output.lastFrame ?? null,
      codecs: model.output.codecs,
      simulator: { codec: model.output.simulator.codec, sizesFollowingReferences: model.output.simulator.sizes },
    },
    /** null for a current model; the sunset date and the replacement while it is being retired. */
    deprecated: model.deprecated
      ? { sunset: model.deprecated.sunset, replacement: model.deprecated.replacement }
      : null,
    inputSchema: model.inputSchema,
    notes: model.notes,
    decisions: model.decisions,
    assumptions: model.assumptions,
  };
}
