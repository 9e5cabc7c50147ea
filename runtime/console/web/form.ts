/**
 * The playground form, generated from a model's input JSON Schema: enums become selects, integers
 * and numbers bounded number inputs, booleans checkboxes, string arrays (reference URLs) a textarea
 * with one URL per line, other strings text inputs; defaults are filled in. Reference fields of a
 * file kind get a file picker that uploads and puts the service:// reference in. Nothing names a model.
 */
import { h, t } from './common.js';
import { uploadable, uploadWidget } from './upload.js';

type Prop = Record<string, any>;

export interface ModelForm {
  element: HTMLElement;
  read(): Record<string, unknown>;
  showErrors(errors: { path: string; message: string }[]): string[];
}

function fieldName(path: string): string {
  return path
    .replace(/^(body\.)?input(\.|\/)?/, '')
    .replace(/^\//, '')
    .split(/[.[/]/)[0];
}

interface Control {
  el: HTMLElement;
  read: () => unknown;
  /** Sets a reference: appended as a line for arrays, the whole value for strings. */
  put?: (value: string) => void;
}

function control(name: string, prop: Prop): Control {
  const id = `f-${name}`;
  const enumValues = prop.enum as unknown[] | undefined;
  if (prop.type === 'boolean') {
    const box = h('input', { type: 'checkbox', id, name, checked: prop.default === true });
    if (enumValues?.length === 1) box.disabled = true;
    return { el: box, read: () => box.checked };
  }
  if (enumValues) {
    const select = h('select', { id, name });
    if (prop.default === undefined) select.append(h('option', { value: '', text: '—' }));
    for (const value of enumValues)
      select.append(h('option', { value: String(value), text: String(value), selected: value === prop.default }));
    return {
      el: select,
      read: () =>
        select.value === '' ? undefined : (enumValues.find((v) => String(v) === select.value) ?? select.value),
    };
  }
  if (prop.type === 'integer' || prop.type === 'number') {
    const input = h('input', { type: 'number', id, name, step: prop.type === 'integer' ? 1 : 'any' });
    if (prop.minimum !== undefined) input.min = String(prop.minimum);
    if (prop.maximum !== undefined) input.max = String(prop.maximum);
    if (prop.default !== undefined) input.value = String(prop.default);
    return { el: input, read: () => (input.value === '' ? undefined : Number(input.value)) };
  }
  if (prop.type === 'array') {
    const area = h('textarea', { id, name, placeholder: t('form.urlsPlaceholder') });
    if (Array.isArray(prop.default)) area.value = prop.default.join('\n');
    return {
      el: area,
      read: () => {
        const items = area.value
          .split(/\s*\n\s*/)
          .map((s) => s.trim())
          .filter(Boolean);
        return items.length ? items : undefined;
      },
      put: (value) => {
        area.value = area.value.trim() ? `${area.value.trimEnd()}\n${value}` : value;
      },
    };
  }
  // A URL (a string with a format pattern) stays one line, however long its maxLength (2,048).
  const long = name.includes('prompt') || (prop.pattern === undefined && (prop.maxLength ?? 0) > 200);
  const input = long ? h('textarea', { id, name }) : h('input', { type: 'text', id, name });
  if (prop.maxLength !== undefined) input.setAttribute('maxlength', String(prop.maxLength));
  if (prop.default !== undefined) input.value = String(prop.default);
  return {
    el: input,
    put: (value) => {
      input.value = value;
    },
    read: () => {
      const value = input.value.trim();
      if (value === '') return undefined;
      // anyOf string|number fields: a plain number is sent as a number.
      return prop.type === undefined && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    },
  };
}

export interface FormModel {
  id: string;
  inputSchema: Prop;
  referenceFields: [string, string][];
  markerDescription: string;
  markerExample: string;
}

export function buildForm(model: FormModel, onChange: () => void): ModelForm {
  const schema = model.inputSchema;
  const required = new Set<string>(schema.required ?? []);
  const readers = new Map<string, () => unknown>();
  const wrappers = new Map<string, HTMLElement>();
  const errorSlots = new Map<string, HTMLElement>();
  const kinds = new Map(model.referenceFields);
  const form = h('div', { id: 'model-form' });
  for (const [name, prop] of Object.entries(schema.properties as Record<string, Prop>)) {
    const { el, read, put } = control(name, prop);
    el.addEventListener('input', onChange);
    el.addEventListener('change', onChange);
    readers.set(name, read);
    const hint = [prop.description ?? ''];
    if (prop.minimum !== undefined || prop.maximum !== undefined)
      hint.push(t('form.range', { min: prop.minimum ?? '…', max: prop.maximum ?? '…' }));
    if (prop.type === 'string' && !prop.enum && name.includes('prompt') && model.markerDescription)
      hint.push(t('form.markers', { description: model.markerDescription, example: model.markerExample }));
    const slot = h('div', { class: 'error', id: `err-${name}` });
    const label = h(
      'label',
      { for: `f-${name}` },
      `${name}${required.has(name) ? ' *' : ''}`,
      h('small', { class: 'hint', text: hint.join(' ') }),
    );
    const wrapper = h('div', { class: 'field', 'data-field': name }, label, el);
    const kind = kinds.get(name);
    if (kind && put && uploadable(kind))
      wrapper.append(
        uploadWidget({ model: model.id, field: name, kind, multiple: prop.type === 'array', put, changed: onChange }),
      );
    wrapper.append(slot);
    wrappers.set(name, wrapper);
    errorSlots.set(name, slot);
    form.append(wrapper);
  }
  const general = h('div', { class: 'error', id: 'err-general' });
  form.append(general);
  return {
    element: form,
    read() {
      const input: Record<string, unknown> = {};
      for (const [name, read] of readers) {
        const value = read();
        if (value !== undefined) input[name] = value;
      }
      return input;
    },
    /** Puts each message under its field; returns the fields that got one. Unplaced messages go to the general slot. */
    showErrors(errors) {
      for (const [name, slot] of errorSlots) {
        slot.textContent = '';
        wrappers.get(name)!.classList.remove('field-error');
      }
      general.textContent = '';
      const placed: string[] = [];
      for (const error of errors) {
        const name = fieldName(error.path);
        const slot = errorSlots.get(name);
        if (slot) {
          slot.textContent = slot.textContent ? `${slot.textContent} ${error.message}` : error.message;
          wrappers.get(name)!.classList.add('field-error');
          placed.push(name);
        } else general.textContent += `${error.path}: ${error.message} `;
      }
      return placed;
    },
  };
}
