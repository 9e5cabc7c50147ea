/** /playground: pick a model, fill the generated form, watch the live quote, submit, follow the task, play the video. */
import { call, CallError, ensureSession, errorText, h } from './common.js';
import { buildForm, type ModelForm } from './form.js';

interface ModelEntry {
  id: string;
  title: string;
  mode: string;
  summary: string;
  inputSchema: Record<string, any>;
  markerDescription: string;
  markerExample: string;
  minimumFor5sCredits: number;
}

const TERMINAL = new Set(['succeeded', 'failed', 'expired', 'canceled']);

async function main() {
  const app = document.getElementById('app')!;
  await ensureSession(app);
  const models = await call<ModelEntry[]>('GET', '/playground/api/models');
  const balance = h('span', { id: 'balance' });
  const refreshBalance = async () => {
    const wallet = await call<{ available: number; held: number }>('GET', '/playground/api/balance');
    balance.textContent = String(wallet.available);
    balance.dataset.available = String(wallet.available);
  };
  await refreshBalance();

  const picker = h('select', { id: 'model' });
  for (const m of [...models].sort((a, b) => a.minimumFor5sCredits - b.minimumFor5sCredits || (a.id < b.id ? -1 : 1))) {
    picker.append(h('option', { value: m.id, text: `${m.title} — from ${m.minimumFor5sCredits} credits / 5 s` }));
  }
  const summary = h('p', { id: 'summary' });
  const formSlot = h('div');
  const quote = h('p', { id: 'quote', 'aria-live': 'polite' });
  const submit = h('button', { id: 'submit', text: 'Generate' });
  const status = h('div', { id: 'status', 'aria-live': 'polite' });
  const result = h('div', { id: 'result' });

  let form: ModelForm | undefined;
  let quoteSeq = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const current = () => models.find((m) => m.id === picker.value)!;

  async function updateQuote() {
    if (!form) return;
    const seq = ++quoteSeq;
    try {
      const q = await call<{ estimatedCredits: number; maxCredits: number; affordable: boolean; warnings: { message: string }[] }>('POST', '/playground/api/quote', { model: picker.value, input: form.read() });
      if (seq !== quoteSeq) return;
      form.showErrors([]);
      quote.dataset.credits = String(q.estimatedCredits);
      quote.textContent = `Quote: ${q.estimatedCredits} credits (held up to ${q.maxCredits})${q.affordable ? '' : ' — more than your playground balance'}${q.warnings.length ? ` · ${q.warnings.map((w) => w.message).join(' ')}` : ''}`;
      submit.disabled = !q.affordable;
    } catch (error) {
      if (seq !== quoteSeq) return;
      delete quote.dataset.credits;
      quote.textContent = 'No quote: fix the fields marked below.';
      showError(error);
    }
  }
  const scheduleQuote = () => {
    clearTimeout(timer);
    timer = setTimeout(updateQuote, 150);
  };

  function showError(error: unknown) {
    if (error instanceof CallError && Array.isArray(error.envelope?.data?.errors)) form?.showErrors(error.envelope.data.errors);
    else if (error instanceof CallError && error.envelope?.data?.param) form?.showErrors([{ path: error.envelope.data.param, message: error.envelope.msg }]);
    else form?.showErrors([{ path: '', message: errorText(error) }]);
  }

  function selectModel() {
    const model = current();
    summary.textContent = `${model.mode}: ${model.summary}`;
    form = buildForm(model, scheduleQuote);
    formSlot.replaceChildren(form.element);
    void updateQuote();
  }
  picker.onchange = selectModel;

  submit.onclick = async () => {
    if (!form) return;
    submit.disabled = true;
    result.replaceChildren();
    try {
      let task = await call('POST', '/playground/api/tasks', { model: picker.value, input: form.read() });
      form.showErrors([]);
      await refreshBalance();
      while (!TERMINAL.has(task.state)) {
        status.replaceChildren(`Task ${task.taskId}: `, h('span', { class: 'badge', id: 'state', text: task.state }), ` ${task.progress ?? 0}%`);
        await new Promise((resolve) => setTimeout(resolve, 400));
        task = await call('GET', `/playground/api/tasks/${encodeURIComponent(task.taskId)}`);
      }
      status.replaceChildren(`Task ${task.taskId}: `, h('span', { class: 'badge', id: 'state', text: task.state }));
      await refreshBalance();
      if (task.state === 'succeeded') {
        const asset = task.output.assets[0];
        const video = h('video', { id: 'video', controls: true, muted: true, playsinline: true, preload: 'auto', src: asset.url });
        result.append(video, h('p', { id: 'charge', 'data-credits': task.credits, text: `Charged ${task.credits} credits (${task.cost} USD) for ${asset.durationSeconds} s.` }));
      } else {
        result.append(h('p', { class: 'error', id: 'task-error', text: task.errorMessage ?? task.state }));
      }
    } catch (error) {
      showError(error);
    } finally {
      submit.disabled = false;
    }
  };

  app.replaceChildren(
    h('section', {}, h('h2', {}, 'Playground · balance ', balance, ' free credits'), h('p', { text: 'Playground credits are separate from API credits: they pay for generations on this page only.' })),
    h('section', {}, h('label', { for: 'model', text: 'Model' }), picker, summary, formSlot, quote, submit),
    h('section', {}, h('h2', { text: 'Result' }), status, result),
  );
  selectModel();
}

main().catch((error) => {
  document.getElementById('app')!.replaceChildren(h('p', { class: 'error', text: errorText(error) }));
});
