import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../runtime/clock.js';
import { signUploadPath } from '../../runtime/files/tickets.js';
import { expectError } from '../http/helpers.js';
import { png, safetensors } from '../../support/media/fixtures.js';
import { putBytes, ticketFor, UNLOCKED, upload } from '../files/support.js';
import type { HttpResult } from '../support/service.js';
import { startTestService, type TestService } from '../support/service.js';
import { recordCounts } from './support.js';

/**
 * Hostile callers of the asset library and the upload flow (item 6 of issue 12, the parts not in
 * hostile.test.ts): a key of one library reaching another library's asset, and forged, moved,
 * replayed or expired upload tickets. What the caller learns must be exactly what an unknown
 * asset or a bogus ticket tells, and nothing may be stored or charged.
 */
const counts = { cases: 0, violations: 0 };
const FAMILY_C3 = 'vendor_b/family_c-3.0/reference-to-video';
const LORA_MODEL = 'vendor_d/family_d-lora/reference-to-video';
const UNKNOWN_ASSET = 'a_unknownunknown';

/** Status, body without request_id, and the header values a client could tell apart. */
function observable(r: HttpResult) {
  const { request_id: _ignored, ...body } = r.body ?? {};
  return {
    status: r.status,
    body,
    contentType: r.headers.get('content-type'),
    contentLength: r.headers.get('content-length'),
    cacheControl: r.headers.get('cache-control'),
  };
}

describe('hostile callers of the asset library and the upload flow', () => {
  let t: TestService;
  const clock = new ManualClock(Date.now());
  const keys: Record<string, string> = {};
  const assets: Record<string, { assetId: string; uri: string }> = {};
  let owner: { accountId: string; apiKey: string };
  let stranger: { accountId: string; apiKey: string };
  beforeAll(async () => {
    t = await startTestService({ uploadMaxBytes: 1_000_000 }, { clock });
    owner = await t.account(UNLOCKED);
    stranger = await t.account(UNLOCKED);
    keys.personal = owner.apiKey;
    keys.siblingPersonal = await t.siblingKey(owner.accountId);
    keys.team = await t.siblingKey(owner.accountId, 'team:studio');
    keys.otherTeam = await t.siblingKey(owner.accountId, 'team:other');
    keys.stranger = stranger.apiKey;
    assets.personalImage = (await upload(t, keys.personal, png(320, 240, false), 'image/png', 'personal.png')).asset;
    assets.teamImage = (await upload(t, keys.team, png(320, 240, false), 'image/png', 'team.png')).asset;
    assets.personalLora = (
      await upload(t, keys.personal, safetensors(), 'application/octet-stream', 'personal.safetensors')
    ).asset;
    assets.teamLora = (await upload(t, keys.team, safetensors(), 'application/octet-stream', 'team.safetensors')).asset;
  });
  afterAll(async () => {
    recordCounts('hostile-assets', counts);
    await t?.close();
  });

  /** Assets' objects (library/) and received uploads (uploads/). */
  const blobFiles = () =>
    ['library', 'uploads']
      .flatMap((folder) => {
        try {
          return readdirSync(join(t.config.dataDir, 'blobs', folder)).map((name) => `${folder}/${name}`);
        } catch {
          return [];
        }
      })
      .sort();
  const assetCount = async () => (await t.service.ctx.db.kysely.selectFrom('assets').select('id').execute()).length;
  const untouched = async () => {
    for (const who of [owner, stranger]) {
      expect(await t.wallet(who.accountId)).toEqual({ available: UNLOCKED, held: 0, spent: 0, purchased: UNLOCKED });
      await t.checkLedger(who.accountId);
    }
  };

  type Action = (key: string, asset: { assetId: string; uri: string }) => Promise<HttpResult>;
  const ACTIONS: [string, Action][] = [
    ['reads', (key, a) => t.call('GET', `/api/v1/assets/${a.assetId}`, { key })],
    ['renames', (key, a) => t.call('PATCH', `/api/v1/assets/${a.assetId}`, { key, body: { name: 'stolen' } })],
    ['deletes', (key, a) => t.call('DELETE', `/api/v1/assets/${a.assetId}`, { key })],
    [
      'uses as a reference in createTask',
      (key, a) =>
        t.call('POST', '/api/v1/jobs/createTask', {
          key,
          body: { model: FAMILY_C3, input: { reference_image_urls: [a.uri] } },
        }),
    ],
    [
      'uses as a reference in a quote',
      (key, a) =>
        t.call('POST', '/api/v1/jobs/quote', {
          key,
          body: { model: FAMILY_C3, input: { reference_image_urls: [a.uri] } },
        }),
    ],
    [
      'uses as loras[].path',
      (key, a) =>
        t.call('POST', '/api/v1/jobs/createTask', {
          key,
          body: { model: LORA_MODEL, input: { prompt: 'a harbour', loras: [{ path: a.uri }] } },
        }),
    ],
  ];
  /** [who, whose asset]: every crossing between a personal library, team libraries and another account. */
  const CROSSINGS: [string, string, 'Image' | 'Lora'][] = [
    ['team', 'personal', 'Image'],
    ['otherTeam', 'team', 'Image'],
    ['personal', 'team', 'Image'],
    ['siblingPersonal', 'team', 'Image'],
    ['stranger', 'personal', 'Image'],
    ['stranger', 'team', 'Image'],
    ['team', 'personal', 'Lora'],
    ['personal', 'team', 'Lora'],
  ];
  const LIBRARY_ROWS = CROSSINGS.flatMap(([who, whose, kind]) =>
    ACTIONS.filter(([name]) => (kind === 'Lora') === (name === 'uses as loras[].path')).map(
      ([name, act]) =>
        [
          `a ${who} key ${name} a ${whose} ${kind.toLowerCase()}`,
          { given: { who, asset: `${whose}${kind}`, act }, want: 'exactly like an unknown asset' },
        ] as const,
    ),
  );

  it.each(LIBRARY_ROWS)('%s: answered exactly like an unknown asset', async (_name, { given }) => {
    counts.cases++;
    const key = keys[given.who];
    const asset = assets[given.asset];
    const theirs = await given.act(key, asset);
    const unknown = await given.act(key, { assetId: UNKNOWN_ASSET, uri: `service://a/${UNKNOWN_ASSET}` });
    expect([400, 404]).toContain(theirs.status);
    expect(observable(theirs)).toEqual(observable(unknown));
    expect(JSON.stringify(theirs.body)).not.toContain(asset.assetId);
    // The asset is untouched and still reachable from its own library.
    const ownKey = given.asset.startsWith('team') ? keys.team : keys.personal;
    const own = await t.call('GET', `/api/v1/assets/${asset.assetId}`, { key: ownKey });
    expect(own.status).toBe(200);
    expect(own.body.data.name).not.toBe('stolen');
    await untouched();
  });

  it("lists and usage show only the caller's own library", async () => {
    counts.cases++;
    const ids = async (key: string) =>
      (await t.call('GET', '/api/v1/assets?limit=100', { key })).body.data.items
        .map((a: { assetId: string }) => a.assetId)
        .sort();
    expect(await ids(keys.personal)).toEqual([assets.personalImage.assetId, assets.personalLora.assetId].sort());
    expect(await ids(keys.team)).toEqual([assets.teamImage.assetId, assets.teamLora.assetId].sort());
    expect(await ids(keys.otherTeam)).toEqual([]);
    expect(await ids(keys.stranger)).toEqual([]);
  });

  /** A fresh ticket of the owner's personal library for a 320x240 PNG. */
  const PNG = png(320, 240, false);
  const newTicket = async (key = keys.personal) => {
    const r = await ticketFor(t, key, { fileName: 'upload.png', contentType: 'image/png', size: PNG.byteLength });
    expect(r.status).toBe(200);
    return r.body.data as { fileId: string; uploadUrl: string; headers: Record<string, string>; maxBytes: number };
  };
  const uploadRow = (fileId: string) =>
    t.service.ctx.db.kysely
      .selectFrom('uploads')
      .select(['state', 'received_bytes', 'blob_key'])
      .where('id', '=', fileId)
      .executeTakeFirst();
  const withQuery = (url: string, change: (u: URL) => void) => {
    const u = new URL(url);
    change(u);
    return u.toString();
  };
  const flipLast = (s: string) => `${s.slice(0, -1)}${s.endsWith('A') ? 'B' : 'A'}`;

  type Attempt = { result: HttpResult; fileId: string; ticketState: string | undefined };
  type TicketRow = [
    string,
    { given: () => Promise<Attempt>; want: { status: number; code: number; ticket: string | undefined } },
  ];
  const put = async (
    fileId: string,
    url: string,
    bytes: Uint8Array = PNG,
    headers = { 'Content-Type': 'image/png' },
  ): Promise<Attempt> => {
    const result = await putBytes(url, bytes, headers);
    return { result, fileId, ticketState: (await uploadRow(fileId))?.state };
  };
  const TICKET_ROWS: TicketRow[] = [
    [
      'signature altered by one character',
      {
        given: async () => {
          const a = await newTicket();
          return put(
            a.fileId,
            withQuery(a.uploadUrl, (u) => u.searchParams.set('sig', flipLast(u.searchParams.get('sig')!))),
          );
        },
        want: { status: 400, code: 40010, ticket: 'pending' },
      },
    ],
    [
      'signature of another ticket of the same library',
      {
        given: async () => {
          const a = await newTicket();
          const b = await newTicket();
          return put(
            a.fileId,
            withQuery(a.uploadUrl, (u) => u.searchParams.set('sig', new URL(b.uploadUrl).searchParams.get('sig')!)),
          );
        },
        want: { status: 400, code: 40010, ticket: 'pending' },
      },
    ],
    [
      'signature made with a guessed secret',
      {
        given: async () => {
          const a = await newTicket();
          const expires = Number(new URL(a.uploadUrl).searchParams.get('expires')) * 1000;
          return put(a.fileId, `${t.url}${signUploadPath('guessed-secret', a.fileId, expires)}`);
        },
        want: { status: 400, code: 40010, ticket: 'pending' },
      },
    ],
    [
      'expiry extended by an hour',
      {
        given: async () => {
          const a = await newTicket();
          return put(
            a.fileId,
            withQuery(a.uploadUrl, (u) =>
              u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600)),
            ),
          );
        },
        want: { status: 400, code: 40010, ticket: 'pending' },
      },
    ],
    [
      'no signature at all',
      {
        given: async () => {
          const a = await newTicket();
          return put(
            a.fileId,
            withQuery(a.uploadUrl, (u) => (u.search = '')),
          );
        },
        want: { status: 400, code: 40010, ticket: 'pending' },
      },
    ],
    [
      'a size cap added to the URL, and more bytes than declared (by Content-Length)',
      {
        given: async () => {
          const a = await newTicket();
          return put(
            a.fileId,
            withQuery(a.uploadUrl, (u) => {
              u.searchParams.set('maxBytes', '1000000000');
              u.searchParams.set('size', '1000000000');
            }),
            Buffer.concat([PNG, Buffer.alloc(50_000)]),
          );
        },
        want: { status: 413, code: 41301, ticket: 'pending' },
      },
    ],
    [
      'a size cap added to the URL, and more bytes than declared (streamed, no length)',
      {
        given: async () => {
          const a = await newTicket();
          const chunks = [PNG, Buffer.alloc(64 * 1024), Buffer.alloc(64 * 1024)];
          const body = new ReadableStream<Uint8Array>({
            pull: (c) => {
              const next = chunks.shift();
              if (next) c.enqueue(next);
              else c.close();
            },
          });
          const response = await fetch(
            withQuery(a.uploadUrl, (u) => u.searchParams.set('maxBytes', '1000000000')),
            { method: 'PUT', headers: a.headers, body, duplex: 'half' } as RequestInit,
          );
          const result = { status: response.status, headers: response.headers, body: await response.json() };
          return { result, fileId: a.fileId, ticketState: (await uploadRow(a.fileId))?.state };
        },
        want: { status: 413, code: 41301, ticket: 'failed' },
      },
    ],
    [
      "another account's ticket moved onto this file",
      {
        given: async () => {
          const mine = await newTicket();
          const theirs = await newTicket(keys.stranger);
          return put(
            mine.fileId,
            withQuery(theirs.uploadUrl, (u) => (u.pathname = `/api/v1/uploads/${mine.fileId}`)),
          );
        },
        want: { status: 400, code: 40010, ticket: 'pending' },
      },
    ],
    [
      "this ticket moved onto another account's file",
      {
        given: async () => {
          const mine = await newTicket();
          const theirs = await newTicket(keys.stranger);
          return put(
            theirs.fileId,
            withQuery(mine.uploadUrl, (u) => (u.pathname = `/api/v1/uploads/${theirs.fileId}`)),
          );
        },
        want: { status: 400, code: 40010, ticket: 'pending' },
      },
    ],
    [
      'a team ticket moved onto a personal file of the same account',
      {
        given: async () => {
          const mine = await newTicket();
          const team = await newTicket(keys.team);
          return put(
            mine.fileId,
            withQuery(team.uploadUrl, (u) => (u.pathname = `/api/v1/uploads/${mine.fileId}`)),
          );
        },
        want: { status: 400, code: 40010, ticket: 'pending' },
      },
    ],
    [
      'a correctly signed ticket for a file that does not exist',
      {
        given: async () =>
          put(
            'f_doesnotexist0',
            `${t.url}${signUploadPath(t.service.ctx.secret, 'f_doesnotexist0', clock.now() + 60_000)}`,
          ),
        want: { status: 400, code: 40010, ticket: undefined },
      },
    ],
    [
      'a file id with path traversal',
      {
        given: async () => {
          const a = await newTicket();
          return put(
            '../../etc/passwd',
            withQuery(a.uploadUrl, (u) => (u.pathname = '/api/v1/uploads/..%2F..%2Fetc%2Fpasswd')),
          );
        },
        want: { status: 400, code: 40010, ticket: undefined },
      },
    ],
    [
      'replayed after a successful upload (other bytes)',
      {
        given: async () => {
          const a = await newTicket();
          expect((await putBytes(a.uploadUrl, PNG, a.headers)).status).toBe(200);
          return put(a.fileId, a.uploadUrl, png(320, 240, true));
        },
        want: { status: 400, code: 40010, ticket: 'uploaded' },
      },
    ],
    [
      'replayed after a refused upload (the first PUT used it up)',
      {
        given: async () => {
          const a = await newTicket();
          expect((await putBytes(a.uploadUrl, Buffer.from('not an image at all'), a.headers)).status).toBe(400);
          return put(a.fileId, a.uploadUrl);
        },
        want: { status: 400, code: 40010, ticket: 'failed' },
      },
    ],
    [
      'expired (15 minutes and a second later)',
      {
        given: async () => {
          const a = await newTicket();
          clock.advance(15 * 60_000 + 1000);
          return put(a.fileId, a.uploadUrl);
        },
        want: { status: 400, code: 40010, ticket: 'pending' },
      },
    ],
  ];

  it.each(TICKET_ROWS)('upload ticket: %s is refused and nothing is stored', async (_name, { given, want }) => {
    counts.cases++;
    const blobsBefore = blobFiles();
    const assetsBefore = await assetCount();
    const { result, fileId, ticketState } = await given();
    expectError(result, want.status, want.code);
    expect(ticketState).toBe(want.ticket);
    // Nothing new on disk (a replay keeps the first bytes), no asset, no charge; commit sees no bytes.
    const expectedBlobs = want.ticket === 'uploaded' ? blobFiles() : blobsBefore;
    expect(blobFiles()).toEqual(expectedBlobs);
    if (want.ticket === 'uploaded') expect(blobFiles().length).toBe(blobsBefore.length + 1);
    expect(await assetCount()).toBe(assetsBefore);
    if (want.ticket === 'pending' || want.ticket === 'failed') {
      // Its own library's commit finds no bytes: the refused PUT stored nothing.
      expectError(
        await t.call('POST', `/api/v1/files/${fileId}/commit`, { key: await ownerKeyOf(fileId) }),
        400,
        40012,
      );
    }
    await untouched();
  });

  /** The key of the library an upload belongs to. */
  const ownerKeyOf = async (fileId: string) => {
    const row = await t.service.ctx.db.kysely
      .selectFrom('uploads')
      .select(['account_id', 'library'])
      .where('id', '=', fileId)
      .executeTakeFirstOrThrow();
    if (row.account_id === stranger.accountId) return keys.stranger;
    return row.library === 'personal' ? keys.personal : keys.team;
  };

  it.each([
    ['another account', () => keys.stranger],
    ['a team key of the same account', () => keys.team],
  ])(
    '%s cannot commit an uploaded personal file: 404 40403 like an unknown file, and the owner still can',
    async (_name, who) => {
      counts.cases++;
      const a = await newTicket();
      expect((await putBytes(a.uploadUrl, PNG, a.headers)).status).toBe(200);
      const theirs = await t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key: who() });
      const unknown = await t.call('POST', '/api/v1/files/f_unknownunknown/commit', { key: who() });
      expectError(theirs, 404, 40403);
      expect(observable(theirs)).toEqual(observable(unknown));
      expect(await uploadRow(a.fileId)).toMatchObject({ state: 'uploaded' });
      expect((await t.call('POST', `/api/v1/files/${a.fileId}/commit`, { key: keys.personal })).status).toBe(200);
      await untouched();
    },
  );
});
