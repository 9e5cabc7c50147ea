/**
 * A file picker beside a reference field of the playground form: each file goes to
 * POST /playground/api/uploads (ticket, bytes, probe and commit on the server, into the playground
 * library) and its service://a/<id> reference is put into the field.
 */
import type { ApiData } from './api.js';
import { CallError, csrfHeader, h, readEnvelope, t } from './common.js';

/** Kinds of reference fields a file can be uploaded for, and what the picker offers. */
const ACCEPT: Record<string, string> = {
  image: 'image/*',
  video: 'video/*',
  audio: 'audio/*',
  document: '.pdf,.docx,.txt,.md',
};

export function uploadable(kind: string): boolean {
  return kind in ACCEPT;
}

/** The raw file body is sent by fetch itself (api() sends JSON); the answer is typed by the contract. */
type UploadedAsset = ApiData<'/playground/api/uploads', 'post'>;

async function uploadFile(model: string, field: string, file: File): Promise<UploadedAsset> {
  const query = new URLSearchParams({ model, field });
  const response = await fetch(`/playground/api/uploads?${query}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: {
      ...csrfHeader(),
      'Content-Type': file.type || 'application/octet-stream',
      'X-File-Name': encodeURIComponent(file.name),
    },
    body: file,
  });
  return readEnvelope<UploadedAsset>(response);
}

/** The server's message (in the session's language), with a hint where storage is still locked. */
function uploadError(error: unknown): string {
  if (!(error instanceof CallError)) return t('common.networkError', { detail: String(error) });
  const fieldMessages = Array.isArray(error.envelope?.data?.errors)
    ? error.envelope.data.errors.map((e: { message: string }) => e.message).join(' ')
    : '';
  const text = fieldMessages ? `${error.envelope.msg} ${fieldMessages}` : error.envelope.msg;
  return error.envelope?.code === 40302 ? `${text} ${t('upload.lockedHint')}` : text;
}

export interface UploadTarget {
  model: string;
  field: string;
  kind: string;
  multiple: boolean;
  /** Puts a reference into the field (appends a line for arrays). */
  put(uri: string): void;
  changed(): void;
}

export function uploadWidget(target: UploadTarget): HTMLElement {
  const id = `upload-${target.field}`;
  const picker = h('input', { type: 'file', id, accept: ACCEPT[target.kind], multiple: target.multiple });
  const status = h('div', { class: 'upload-status', id: `upload-status-${target.field}`, 'aria-live': 'polite' });
  // Its own slot: the live quote rewrites the field's error slot and must not wipe why a file was refused.
  const error = h('div', { class: 'error', id: `upload-error-${target.field}`, 'aria-live': 'polite' });
  picker.onchange = async () => {
    const files = Array.from(picker.files ?? []);
    picker.value = '';
    error.textContent = '';
    for (const file of files) {
      status.textContent = t('upload.uploading', { name: file.name });
      try {
        const asset = await uploadFile(target.model, target.field, file);
        target.put(asset.uri);
        const thumb =
          asset.kind === 'image' && asset.preview
            ? h('img', { src: asset.preview, alt: '', height: 40, class: 'thumb' })
            : null;
        status.replaceChildren(...(thumb ? [thumb, ' '] : []), t('upload.done', { name: file.name }));
        target.changed();
      } catch (failure) {
        status.textContent = '';
        error.textContent = uploadError(failure);
        break;
      }
    }
  };
  return h(
    'div',
    { class: 'upload' },
    h('label', { for: id, class: 'upload-label', text: t('upload.label') }),
    picker,
    status,
    error,
  );
}
