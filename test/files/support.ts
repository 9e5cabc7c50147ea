import { expect } from 'vitest';
import type { HttpResult, TestService } from '../support/service.js';

/** Lifetime purchases that unlock the 'basic' plan of spec/storage-plans.yaml (1 GiB). */
export const UNLOCKED = 5_000;

export interface Uploaded {
  ticket: any;
  put: HttpResult;
  commit: HttpResult;
  asset: any;
}

export function ticketFor(t: TestService, key: string, body: Record<string, unknown>): Promise<HttpResult> {
  return t.call('POST', '/api/v1/common/upload-url', { key, body });
}

/** PUT the bytes to a ticket's upload URL, as a client would: the URL and headers as given. */
export async function putBytes(
  uploadUrl: string,
  bytes: Uint8Array,
  headers: Record<string, string>,
): Promise<HttpResult> {
  const response = await fetch(uploadUrl, { method: 'PUT', headers, body: new Uint8Array(bytes) });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: response.status, headers: response.headers, body };
}

/** The whole flow: ticket, direct upload, commit. Each step must succeed. */
export async function upload(
  t: TestService,
  key: string,
  bytes: Uint8Array,
  contentType: string,
  fileName: string,
  name?: string,
): Promise<Uploaded> {
  const ticketResponse = await ticketFor(t, key, { fileName, contentType, size: bytes.byteLength });
  expect(ticketResponse.status, JSON.stringify(ticketResponse.body)).toBe(200);
  const ticket = ticketResponse.body.data;
  const put = await putBytes(ticket.uploadUrl, bytes, ticket.headers);
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const commit = await t.call('POST', `/api/v1/files/${ticket.fileId}/commit`, { key, body: name ? { name } : {} });
  expect(commit.status, JSON.stringify(commit.body)).toBe(200);
  return { ticket, put, commit, asset: commit.body.data };
}

/** An error envelope apart from request_id, for "indistinguishable" comparisons. */
export function withoutRequestId(r: HttpResult) {
  const { request_id: _ignored, ...rest } = r.body;
  return { status: r.status, ...rest };
}

/** A task's ledger entries, oldest first, as kind and amount: what a hold came to (settled, released). */
export function taskLedger(t: TestService, taskId: string): Promise<{ kind: string; amount: number }[]> {
  return t.service.ctx.db.kysely
    .selectFrom('ledger_entries')
    .select(['kind', 'amount'])
    .where('task_id', '=', taskId)
    .orderBy('id')
    .execute();
}
