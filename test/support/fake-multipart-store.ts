import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PendingUpload {
  key: string;
  uploadId: string;
  initiated: Date;
}

export interface FakeMultipartStore {
  endpoint: string;
  /** Multipart uploads still open (the sweep's aborts remove them). */
  uploads: PendingUpload[];
  /** The request lines it answered, in order (`GET /bucket?uploads...`). */
  requests: string[];
  close(): Promise<void>;
}

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/**
 * The two S3 calls s3rver lacks, on loopback: ListMultipartUploads (`GET /BUCKET?uploads`, in pages
 * of `pageSize` with key and upload-id markers, filtered by prefix) and AbortMultipartUpload
 * (`DELETE /BUCKET/KEY?uploadId=`). With `refuseKey`, every request is refused as S3 refuses an
 * unknown access key (403 InvalidAccessKeyId). Path-style addressing only.
 */
export async function startFakeMultipartStore(
  bucket: string,
  uploads: PendingUpload[],
  options: { pageSize?: number; refuseKey?: boolean } = {},
): Promise<FakeMultipartStore> {
  const pageSize = options.pageSize ?? 1000;
  const state = { uploads: [...uploads], requests: [] as string[] };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    state.requests.push(`${req.method} ${url.pathname}${url.search}`);
    req.resume();
    const send = (status: number, body = '') => {
      res.writeHead(status, { 'content-type': 'application/xml' });
      res.end(body);
    };
    if (options.refuseKey)
      return send(
        403,
        xml(
          '<Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>',
        ),
      );
    const [, first, ...rest] = url.pathname.split('/');
    if (decodeURIComponent(first) !== bucket)
      return send(404, xml('<Error><Code>NoSuchBucket</Code><Message>no such bucket</Message></Error>'));
    if (req.method === 'GET' && url.searchParams.has('uploads')) {
      const prefix = url.searchParams.get('prefix') ?? '';
      const keyMarker = url.searchParams.get('key-marker') ?? '';
      const idMarker = url.searchParams.get('upload-id-marker') ?? '';
      const sorted = state.uploads
        .filter((u) => u.key.startsWith(prefix))
        .sort((a, b) => (a.key === b.key ? a.uploadId.localeCompare(b.uploadId) : a.key.localeCompare(b.key)));
      const after = sorted.filter(
        (u) => !keyMarker || u.key > keyMarker || (u.key === keyMarker && u.uploadId > idMarker),
      );
      const page = after.slice(0, pageSize);
      const truncated = after.length > page.length;
      const last = page[page.length - 1];
      return send(
        200,
        xml(
          `<ListMultipartUploadsResult><Bucket>${bucket}</Bucket><IsTruncated>${truncated}</IsTruncated>${
            truncated
              ? `<NextKeyMarker>${escapeXml(last.key)}</NextKeyMarker><NextUploadIdMarker>${last.uploadId}</NextUploadIdMarker>`
              : ''
          }${page
            .map(
              (u) =>
                `<Upload><Key>${escapeXml(u.key)}</Key><UploadId>${u.uploadId}</UploadId><Initiated>${u.initiated.toISOString()}</Initiated></Upload>`,
            )
            .join('')}</ListMultipartUploadsResult>`,
        ),
      );
    }
    if (req.method === 'DELETE' && url.searchParams.has('uploadId')) {
      const key = rest.map(decodeURIComponent).join('/');
      const index = state.uploads.findIndex((u) => u.key === key && u.uploadId === url.searchParams.get('uploadId'));
      if (index < 0) return send(404, xml('<Error><Code>NoSuchUpload</Code><Message>no such upload</Message></Error>'));
      state.uploads.splice(index, 1);
      return send(204);
    }
    send(501, xml('<Error><Code>NotImplemented</Code><Message>not in this fake</Message></Error>'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get uploads() {
      return state.uploads;
    },
    requests: state.requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
