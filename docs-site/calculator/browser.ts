/**
 * The model page's live price calculator, bundled for the browser by esbuild (docs-site/site.ts).
 * It prices with generated/prices.ts, the functions the service itself uses for quotes and holds,
 * on the input the service would see: the field defaults filled in, the chosen values on top.
 */
import { prices } from '../../generated/prices.js';
import { creditsToUsd } from '../../generated/support.js';
import type { CalculatorConfig, Control } from './config.js';

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} missing`);
  return element as T;
}

function controlValue(control: Control): unknown {
  const element = byId<HTMLInputElement & HTMLSelectElement>(`calc-${control.field}`);
  switch (control.kind) {
    case 'select':
      return element.value;
    case 'checkbox':
      return element.checked;
    case 'duration': {
      const auto = document.getElementById(`calc-${control.field}-auto`) as HTMLInputElement | null;
      element.disabled = Boolean(auto?.checked);
      if (auto?.checked && control.auto !== null) return control.auto;
      const n = Math.round(Number(element.value));
      return Number.isFinite(n) ? Math.min(control.max, Math.max(control.min, n)) : control.value;
    }
    case 'count': {
      const n = Math.round(Number(element.value));
      return Number.isFinite(n) ? Math.min(control.max, Math.max(control.min, n)) : control.min;
    }
  }
}

/** The input a person would send: required placeholders, then every chosen value. */
export function requestInput(config: CalculatorConfig, values: Map<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = structuredClone(config.required);
  for (const control of config.controls) {
    const value = values.get(control.field);
    if (control.kind === 'count') {
      const count = value as number;
      if (count > 0)
        input[control.field] = Array.from(
          { length: count },
          (_, i) =>
            `https://example.com/${control.referenceKind}${i + 1}.${config.placeholderExtension[control.referenceKind] ?? 'bin'}`,
        );
    } else if (!(control.kind === 'checkbox' && control.fixed)) {
      input[control.field] = value;
    }
  }
  return input;
}

function update(config: CalculatorConfig) {
  const values = new Map(config.controls.map((control) => [control.field, controlValue(control)]));
  const input = requestInput(config, values);
  byId('calc-request').textContent = JSON.stringify({ model: config.model, input }, null, 2);
  const error = byId('calc-error');
  const price = prices.get(config.model);
  try {
    if (!price) throw new Error('this model has no price function in this build');
    const result = price({ ...structuredClone(config.defaults), ...input });
    byId('calc-credits').textContent = String(result.estimatedCredits);
    byId('calc-usd').textContent = creditsToUsd(result.estimatedCredits);
    byId('calc-rate').textContent = result.rate;
    byId('calc-seconds').textContent = String(result.billableSeconds);
    byId('calc-max-credits').textContent = String(result.maxCredits);
    byId('calc-max-usd').textContent = creditsToUsd(result.maxCredits);
    error.hidden = true;
  } catch (e) {
    for (const id of ['calc-credits', 'calc-usd', 'calc-rate', 'calc-seconds', 'calc-max-credits', 'calc-max-usd'])
      byId(id).textContent = '–';
    error.textContent = `No price for this combination: ${(e as Error).message}`;
    error.hidden = false;
  }
}

function start() {
  const config = JSON.parse(byId('calc-config').textContent ?? '{}') as CalculatorConfig;
  const form = document.querySelector<HTMLFormElement>('#price-calculator form')!;
  form.addEventListener('submit', (event) => event.preventDefault());
  form.addEventListener('input', () => update(config));
  form.addEventListener('change', () => update(config));
  update(config);
  document.getElementById('price-calculator')?.setAttribute('data-ready', 'true');
}

if (typeof document !== 'undefined' && document.getElementById('calc-config')) start();
