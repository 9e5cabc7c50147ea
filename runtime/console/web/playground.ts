/** /playground: pick a model, fill the generated form, watch the live quote, submit, follow the task, play the video. */
import { api, CallError, ensureSession, errorText, h, stateText, t, tNodes } from './common.js';
import { buildForm, type ModelForm } from './form.js';

interface ModelEntry {
  id: string;
  title: string;
  mode: string;
  summary: string;
  inputSchema: Record<string, any>;
  referenceFields: [string, string][];
  markerDescription: string;
  markerExample: string;
  minimumFor5sCredits: number;
  /** What the model's defaults hold with just a prompt; null when it needs more than a prompt to run. */
  defaultsMaxCredits: number | null;
}

/**
 * The model the page opens on: the one whose defaults hold least among those a prompt alone can run
 * within the balance (by price, never by name); without one, the cheapest by its lowest price.
 */
function openingModel(models: ModelEntry[], available: number): ModelEntry | undefined {
  const byDefaults = models
    .filter((m) => m.defaultsMaxCredits !== null && m.defaultsMaxCredits <= available)
    .sort((a, b) => a.defaultsMaxCredits! - b.defaultsMaxCredits! || (a.id < b.id ? -1 : 1));
  return byDefaults[0];
}

const TERMINAL = new Set(['succeeded', 'failed', 'expired', 'canceled']);

async function main() {
  const app = document.getElementById('app')!;
  await ensureSession(app);
  const models = await api('get', '/playground/api/models');
  const balance = h('span', { id: 'balance' });
  const refreshBalance = async () => {
    const wallet = await api('get', '/playground/api/balance');
    balance.textContent = String(wallet.available);
    balance.dataset.available = String(wallet.available);
  };
  await refreshBalance();

  const picker = h('select', { id: 'model' });
  for (const m of [...models].sort((a, b) => a.minimumFor5sCredits - b.minimumFor5sCredits || (a.id < b.id ? -1 : 1))) {
    picker.append(
      h('option', {
        value: m.id,
        text: t('playground.modelOption', { title: m.title, credits: m.minimumFor5sCredits }),
      }),
    );
  }
  const opening = openingModel(models, Number(balance.dataset.available));
  if (opening) picker.value = opening.id;
  const summary = h('p', { id: 'summary' });
  const formSlot = h('div');
  const quote = h('p', { id: 'quote', 'aria-live': 'polite' });
  const submit = h('button', { id: 'submit', text: t('playground.generate') });
  // Why Generate is off, next to it (a disabled button says nothing on its own).
  const submitReason = h('p', { id: 'submit-reason', class: 'hint', 'aria-live': 'polite' });
  const status = h('div', { id: 'status', 'aria-live': 'polite' });
  const result = h('div', { id: 'result' });

  let form: ModelForm | undefined;
  // Field errors wait until the user has done something: edited a field or pressed Generate.
  let acted = false;
  let quoteSeq = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const current = () => models.find((m) => m.id === picker.value)!;

  /** Generate is on unless the last quote holds more than the balance; then the reason is shown. */
  function allowSubmit(over?: { max: number; available: number }) {
    submit.disabled = over !== undefined;
    submitReason.textContent = over ? t('playground.cannotAfford', over) : '';
  }

  async function updateQuote() {
    if (!form) return;
    const seq = ++quoteSeq;
    // Nothing asked before the user acts: a form with only its defaults has no prompt yet, and its quote would be a 400.
    if (!acted) {
      delete quote.dataset.credits;
      quote.textContent = t('playground.startHint');
      form.showErrors([]);
      allowSubmit();
      return;
    }
    try {
      const q = await api('post', '/playground/api/quote', { body: { model: picker.value, input: form.read() } });
      if (seq !== quoteSeq) return;
      form.showErrors([]);
      quote.dataset.credits = String(q.estimatedCredits);
      const parts = [t('playground.quote', { credits: q.estimatedCredits, max: q.maxCredits })];
      if (!q.affordable) parts.push(t('playground.unaffordable'));
      if (q.warnings.length) parts.push(q.warnings.map((w) => w.message).join(' '));
      quote.textContent = parts.join(' · ');
      allowSubmit(q.affordable ? undefined : { max: q.maxCredits, available: q.available });
    } catch (error) {
      if (seq !== quoteSeq) return;
      delete quote.dataset.credits;
      quote.textContent = t('playground.noQuote');
      showError(error);
      // Pressing Generate shows what is wrong with the fields: it stays on.
      allowSubmit();
    }
  }
  const scheduleQuote = () => {
    acted = true;
    clearTimeout(timer);
    timer = setTimeout(updateQuote, 150);
  };

  function showError(error: unknown) {
    if (error instanceof CallError && Array.isArray(error.envelope?.data?.errors))
      form?.showErrors(error.envelope.data.errors);
    else if (error instanceof CallError && error.envelope?.data?.param)
      form?.showErrors([{ path: error.envelope.data.param, message: error.envelope.msg }]);
    else form?.showErrors([{ path: '', message: errorText(error) }]);
  }

  function selectModel() {
    const model = current();
    summary.textContent = `${model.mode}: ${model.summary}`;
    status.replaceChildren();
    result.replaceChildren();
    acted = false;
    form = buildForm(model, scheduleQuote);
    formSlot.replaceChildren(form.element);
    void updateQuote();
  }
  picker.onchange = selectModel;

  submit.onclick = async () => {
    if (!form) return;
    acted = true;
    submit.disabled = true;
    status.replaceChildren();
    result.replaceChildren();
    try {
      let task = await api('post', '/playground/api/tasks', { body: { model: picker.value, input: form.read() } });
      form.showErrors([]);
      await refreshBalance();
      while (!TERMINAL.has(task.state)) {
        status.replaceChildren(
          ...tNodes('playground.task', { taskId: task.taskId }),
          ' ',
          h('span', { class: 'badge', id: 'state', 'data-state': task.state, text: stateText(task.state) }),
          ` ${task.progress ?? 0}%`,
        );
        await new Promise((resolve) => setTimeout(resolve, 400));
        task = await api('get', '/playground/api/tasks/{taskId}', { params: { taskId: task.taskId } });
      }
      status.replaceChildren(
        ...tNodes('playground.task', { taskId: task.taskId }),
        ' ',
        h('span', { class: 'badge', id: 'state', 'data-state': task.state, text: stateText(task.state) }),
      );
      await refreshBalance();
      const asset = task.output?.assets[0];
      if (task.state === 'succeeded' && asset) {
        const video = h('video', {
          id: 'video',
          controls: true,
          muted: true,
          playsinline: true,
          preload: 'auto',
          src: asset.url,
        });
        result.append(
          video,
          h('p', {
            id: 'charge',
            'data-credits': task.credits,
            text: t('playground.charged', { credits: task.credits, cost: task.cost, seconds: asset.durationSeconds }),
          }),
        );
      } else {
        result.append(h('p', { class: 'error', id: 'task-error', text: task.errorMessage ?? task.state }));
      }
    } catch (error) {
      showError(error);
    } finally {
      // The balance changed: whether the same form is still affordable is the quote's to say.
      submit.disabled = false;
      void updateQuote();
    }
  };

  app.replaceChildren(
    h(
      'section',
      {},
      h('h2', {}, ...tNodes('playground.heading', { balance })),
      h('p', { text: t('playground.separate') }),
    ),
    h(
      'section',
      {},
      h('label', { for: 'model', text: t('playground.model') }),
      picker,
      summary,
      formSlot,
      quote,
      submit,
      submitReason,
    ),
    h('section', {}, h('h2', { text: t('playground.result') }), status, result),
  );
  selectModel();
}

main().catch((error) => {
  document.getElementById('app')!.replaceChildren(h('p', { class: 'error', text: errorText(error) }));
});
