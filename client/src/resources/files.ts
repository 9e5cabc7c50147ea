import { MediaforgeError } from '../core/errors.js';
import type { Core, RequestOptions } from '../core/request.js';
import type { Asset, DownloadUrls, UploadTicket } from '../types.js';

/** What `files.upload` accepts: bytes, or a path on this machine (Node). */
export type UploadSource = Uint8Array | ArrayBuffer | Blob | string;

export interface UploadOptions extends RequestOptions {
  /** Name sent with the ticket (default: the path's base name, or `upload`). */
  fileName?: string | undefined;
  /** Media type (default: from the file name, else from the first bytes, else application/octet-stream). */
  contentType?: string | undefined;
  /** Asset name given at commit (default: the file name). */
  name?: string | undefined;
}

const TYPES_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  bmp: 'image/bmp',
  gif: 'image/gif',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  safetensors: 'application/octet-stream',
};

/** The media type of a file by its name, then by its first bytes. */
export function guessContentType(fileName: string, bytes: Uint8Array): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(fileName)?.[1]?.toLowerCase();
  if (ext && TYPES_BY_EXTENSION[ext]) return TYPES_BY_EXTENSION[ext];
  const head = (n: number) => Array.from(bytes.subarray(0, n));
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (head(8).join(',') === '137,80,78,71,13,10,26,10') return 'image/png';
  if (head(3).join(',') === '255,216,255') return 'image/jpeg';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(4, 8) === 'ftyp') return ascii(8, 10) === 'qt' ? 'video/quicktime' : 'video/mp4';
  if (ascii(0, 3) === 'ID3' || head(2).join(',') === '255,251') return 'audio/mpeg';
  if (ascii(0, 5) === '%PDF-') return 'application/pdf';
  return 'application/octet-stream';
}

/** The part of Node's `process` a path upload needs (absent in browsers). */
interface NodeProcess {
  getBuiltinModule?(id: 'fs/promises'): { readFile(path: string): Promise<Uint8Array> };
}

/**
 * Reads a file path in Node. `process.getBuiltinModule` (Node 20.16+) instead of an `import` of
 * node:fs: a browser bundle of this package then contains no `node:` import for bundlers to trip on.
 */
async function readPath(path: string): Promise<{ bytes: Uint8Array; fileName: string }> {
  const nodeProcess = (globalThis as { process?: NodeProcess }).process;
  if (typeof nodeProcess?.getBuiltinModule !== 'function')
    throw new MediaforgeError('files.upload: a file path needs Node 20.16 or newer; in a browser pass bytes or a Blob');
  const bytes = await nodeProcess.getBuiltinModule('fs/promises').readFile(path);
  return {
    bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    fileName: path.split(/[\\/]/).pop() || 'upload',
  };
}

async function readSource(source: UploadSource): Promise<{ bytes: Uint8Array; fileName?: string | undefined }> {
  if (typeof source === 'string') return readPath(source);
  if (source instanceof Uint8Array) return { bytes: source };
  if (source instanceof ArrayBuffer) return { bytes: new Uint8Array(source) };
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    return { bytes: new Uint8Array(await source.arrayBuffer()), fileName: (source as { name?: string }).name };
  }
  throw new MediaforgeError('files.upload: pass bytes (Uint8Array, ArrayBuffer, Blob) or a file path');
}

export class Files {
  constructor(private readonly core: Core) {}

  /**
   * Uploads a file for use as a reference and returns its `service://` URI: requests a ticket
   * (POST /common/upload-url), PUTs the bytes to the ticket's signed URL, commits the upload
   * (POST /files/{fileId}/commit).
   */
  async upload(source: UploadSource, options: UploadOptions = {}): Promise<string> {
    return (await this.uploadAsset(source, options)).uri;
  }

  /** As `upload`, returning the committed asset record. */
  async uploadAsset(source: UploadSource, options: UploadOptions = {}): Promise<Asset> {
    const { bytes, fileName: sourceName } = await readSource(source);
    const fileName = options.fileName ?? sourceName ?? 'upload';
    const contentType = options.contentType ?? guessContentType(fileName, bytes);
    const ticket = await this.createTicket({ fileName, contentType, size: bytes.byteLength }, options);
    await this.put(ticket, bytes, contentType, options);
    return this.commit(ticket.fileId, options.name !== undefined ? { name: options.name } : {}, options);
  }

  /** Step 1: a single-use ticket for a direct upload. Not repeated on failure (a ticket is a new resource). */
  async createTicket(
    body: { fileName: string; contentType: string; size: number },
    options: RequestOptions = {},
  ): Promise<UploadTicket> {
    return (
      await this.core.call<UploadTicket>(
        (signal) => this.core.api.POST('/api/v1/common/upload-url', { body, signal }),
        'unsafe',
        options,
      )
    ).data;
  }

  /** Step 2: the bytes, sent to the ticket's signed URL with the ticket's headers (no API key: the URL is the credential). */
  async put(ticket: UploadTicket, bytes: Uint8Array, contentType: string, options: RequestOptions = {}): Promise<void> {
    const url = new URL(ticket.uploadUrl, `${this.core.baseUrl}/`).toString();
    await this.core.call<unknown>(
      async (signal) => {
        const response = await this.core.fetchImpl(url, {
          method: ticket.method ?? 'PUT',
          headers: { 'Content-Type': contentType, ...ticket.headers },
          body: bytes as BodyInit,
          signal,
        });
        const text = await response.text();
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON */
        }
        return response.ok ? { data: parsed, response } : { error: parsed, response };
      },
      'unsafe',
      options,
    );
  }

  /** Step 3: finishes an upload; the asset's `uri` is its `service://` URI. */
  async commit(fileId: string, body: { name?: string } = {}, options: RequestOptions = {}): Promise<Asset> {
    return (
      await this.core.call<Asset>(
        (signal) => this.core.api.POST('/api/v1/files/{fileId}/commit', { params: { path: { fileId } }, body, signal }),
        'unsafe',
        options,
      )
    ).data;
  }

  /** Imports a LoRA file from a direct HTTPS `.safetensors` link (POST /files/import). */
  async import(url: string, options: RequestOptions & { name?: string | undefined } = {}): Promise<Asset> {
    const { name, ...request } = options;
    return (
      await this.core.call<Asset>(
        (signal) => this.core.api.POST('/api/v1/files/import', { body: { url, ...(name ? { name } : {}) }, signal }),
        'unsafe',
        request,
      )
    ).data;
  }

  /** Fresh signed links to a task's output (POST /common/download-url). */
  async downloadUrls(taskId: string, options: RequestOptions = {}): Promise<DownloadUrls> {
    return (
      await this.core.call<DownloadUrls>(
        (signal) => this.core.api.POST('/api/v1/common/download-url', { body: { taskId }, signal }),
        'safe',
        options,
      )
    ).data;
  }
}
