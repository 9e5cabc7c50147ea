/**
 * What a model page's price calculator offers, derived from the catalogue (generated/catalogue.ts)
 * alone: the resolution and duration fields, the model's other pricing options that are input
 * fields, and a count for every reference array (a reference clip can select a rate, e.g. with_video,
 * or add billable seconds). Nothing here names a model.
 */
import type { ModelInfo } from '../../generated/catalogue.js';

export type Control =
  | { kind: 'select'; field: string; label: string; values: string[]; value: string }
  | { kind: 'checkbox'; field: string; label: string; value: boolean; fixed: boolean }
  | { kind: 'duration'; field: string; label: string; min: number; max: number; value: number; auto: number | null }
  | { kind: 'count'; field: string; label: string; referenceKind: string; min: number; max: number; value: number };

/** Everything the browser script needs; embedded in the page as JSON. */
export interface CalculatorConfig {
  model: string;
  controls: Control[];
  /** Values of every input field that has a default (the server fills the same ones in). */
  defaults: Record<string, unknown>;
  /** Values for required fields the calculator does not control (a prompt), so the request body is complete. */
  required: Record<string, unknown>;
  placeholderExtension: Record<string, string>;
}

const DURATION_FIELD = 'duration_seconds';
const RESOLUTION_FIELD = 'resolution';
const EXTENSIONS: Record<string, string> = { image: 'png', video: 'mp4', audio: 'mp3', document: 'pdf' };

type Schema = Record<string, unknown> & {
  pattern?: unknown;
  enum?: unknown[];
  type?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  anyOf?: Schema[];
  const?: unknown;
  minItems?: number;
  maxItems?: number;
};

function rangeOf(schema: Schema): { min: number; max: number; auto: number | null } {
  if (typeof schema.minimum === 'number' || typeof schema.maximum === 'number')
    return { min: schema.minimum ?? 1, max: schema.maximum ?? 60, auto: null };
  const branches = schema.anyOf ?? [];
  const auto = branches.find((b) => typeof b.const === 'number')?.const as number | undefined;
  const range = branches.find((b) => typeof b.minimum === 'number' || typeof b.maximum === 'number');
  return { min: range?.minimum ?? 1, max: range?.maximum ?? 60, auto: auto ?? null };
}

export function calculatorConfig(info: ModelInfo): CalculatorConfig {
  const properties = info.inputSchema.properties as Record<string, Schema>;
  const requiredFields = new Set(info.inputSchema.required ?? []);
  const controls: Control[] = [];
  const defaults: Record<string, unknown> = {};
  for (const [field, schema] of Object.entries(properties))
    if (schema.default !== undefined) defaults[field] = schema.default;

  const addChoice = (field: string) => {
    const schema = properties[field];
    if (!schema || controls.some((c) => c.field === field)) return;
    if (schema.type === 'boolean') {
      const values = (schema.enum as boolean[] | undefined) ?? [true, false];
      controls.push({
        kind: 'checkbox',
        field,
        label: field,
        value: Boolean(schema.default ?? values[0]),
        fixed: values.length === 1,
      });
    } else if (Array.isArray(schema.enum)) {
      const values = schema.enum.map(String);
      controls.push({ kind: 'select', field, label: field, values, value: String(schema.default ?? values[0]) });
    }
  };

  addChoice(RESOLUTION_FIELD);
  if (properties[DURATION_FIELD]) {
    const range = rangeOf(properties[DURATION_FIELD]);
    const value =
      typeof properties[DURATION_FIELD].default === 'number'
        ? (properties[DURATION_FIELD].default as number)
        : range.min;
    controls.push({
      kind: 'duration',
      field: DURATION_FIELD,
      label: DURATION_FIELD,
      min: range.min,
      max: range.max,
      value,
      auto: range.auto,
    });
  }
  for (const option of info.pricing.options) addChoice(option);
  for (const [field, kind] of info.referenceFields) {
    const schema = properties[field];
    if (!schema) continue;
    if (schema.type === 'array') {
      const min = schema.minItems ?? 0;
      const max = schema.maxItems ?? Math.max(min, 9);
      controls.push({ kind: 'count', field, label: `${kind} references`, referenceKind: kind, min, max, value: min });
    }
  }

  // A rule that wants at least one of several references starts the calculator with one of the first.
  for (const rule of info.rules) {
    if (rule.kind !== 'atLeastOne' || !Array.isArray(rule.fields)) continue;
    const counts = controls.filter(
      (c): c is Extract<Control, { kind: 'count' }> =>
        c.kind === 'count' && (rule.fields as string[]).includes(c.field),
    );
    if (counts.length > 0 && counts.every((c) => c.value === 0)) counts[0].value = Math.min(1, counts[0].max);
  }

  const kindOf = new Map(info.referenceFields);
  const required: Record<string, unknown> = {};
  for (const field of requiredFields) {
    if (controls.some((c) => c.field === field) || defaults[field] !== undefined) continue;
    const schema = properties[field];
    if (schema?.type === 'string') {
      const kind = kindOf.get(field);
      if (field === 'prompt') required[field] = info.markerExample || 'A short scene description.';
      else if (kind || String(schema.pattern ?? '').includes('https'))
        required[field] = `https://example.com/${field}.${EXTENSIONS[kind ?? ''] ?? 'bin'}`;
      else required[field] = 'example';
    } else if (schema?.type === 'array') required[field] = [];
  }
  return { model: info.id, controls, defaults, required, placeholderExtension: EXTENSIONS };
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The calculator's markup: a form that works as soon as the script loads, and its JSON config. */
export function calculatorHtml(config: CalculatorConfig, scriptUrl: string): string {
  const controls = config.controls.map((control) => {
    const id = `calc-${control.field}`;
    switch (control.kind) {
      case 'select':
        return `<label for="${id}">${escapeHtml(control.label)}</label><select id="${id}" name="${escapeHtml(control.field)}">${control.values
          .map(
            (v) =>
              `<option value="${escapeHtml(v)}"${v === control.value ? ' selected' : ''}>${escapeHtml(v)}</option>`,
          )
          .join('')}</select>`;
      case 'checkbox':
        return `<label for="${id}">${escapeHtml(control.label)}</label><input type="checkbox" id="${id}" name="${escapeHtml(control.field)}"${control.value ? ' checked' : ''}${control.fixed ? ' disabled' : ''}>`;
      case 'duration':
        return `<label for="${id}">${escapeHtml(control.label)}</label><span class="calc-duration"><input type="number" id="${id}" name="${escapeHtml(control.field)}" min="${control.min}" max="${control.max}" step="1" value="${control.value}"> s${
          control.auto !== null
            ? ` <label class="calc-inline"><input type="checkbox" id="${id}-auto" name="${escapeHtml(control.field)}__auto"> model chooses (${control.auto})</label>`
            : ''
        }</span>`;
      case 'count':
        return `<label for="${id}">${escapeHtml(control.label)} <code>${escapeHtml(control.field)}</code></label><input type="number" id="${id}" name="${escapeHtml(control.field)}" min="${control.min}" max="${control.max}" step="1" value="${control.value}">`;
    }
  });
  return `<section class="calculator" id="price-calculator" aria-labelledby="price-calculator-title">
<h3 id="price-calculator-title">Price calculator</h3>
<p>Computed in your browser by the same generated price function the service uses for quotes and holds.</p>
<form class="calc-form">${controls.map((c) => `<div class="calc-row">${c}</div>`).join('\n')}</form>
<div class="calc-result" aria-live="polite">
<div><span class="calc-label">Estimated</span> <strong><span id="calc-credits">–</span> credits</strong> = <strong><span id="calc-usd">–</span> USD</strong></div>
<div><span class="calc-label">Rate</span> <span id="calc-rate">–</span> credits/s × <span id="calc-seconds">–</span> billable s</div>
<div><span class="calc-label">Maximum</span> <span id="calc-max-credits">–</span> credits = <span id="calc-max-usd">–</span> USD</div>
<div id="calc-error" class="calc-error" hidden></div>
</div>
<details><summary>The same request as a quote body (POST /api/v1/jobs/quote)</summary><pre><code id="calc-request"></code></pre></details>
<script type="application/json" id="calc-config">${JSON.stringify(config).replace(/</g, '\\u003c')}</script>
<script type="module" src="${escapeHtml(scriptUrl)}"></script>
</section>`;
}
