// @store-suite: the library is uploaded through the store's presigned PUT (vitest.config.ts runs it on the local and the S3 store).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitiesCommand } from '../../runtime/assets/entities-cli.js';
import { createTask, expectError, expectOk } from '../http/helpers.js';
import { startTestService, type TestService } from '../support/service.js';
import { jpg, png, wav } from '../../support/media/fixtures.js';
import { UNLOCKED, upload, withoutRequestId } from './support.js';

const FAMILY_C3 = 'vendor_b/family_c-3.0/reference-to-video';
const O3 = 'vendor_c/o3/reference-to-video';

describe('the private asset library', () => {
  let t: TestService;
  let owner: { accountId: string; apiKey: string };
  let sibling: string;
  let team: string;
  let teamMate: string;
  let otherTeam: string;
  let stranger: { accountId: string; apiKey: string };
  let personal: any;
  let teamAsset: any;
  beforeAll(async () => {
    t = await startTestService();
    owner = await t.account(UNLOCKED);
    stranger = await t.account(UNLOCKED);
    sibling = await t.siblingKey(owner.accountId);
    team = await t.siblingKey(owner.accountId, 'team:studio');
    teamMate = await t.siblingKey(owner.accountId, 'team:studio');
    otherTeam = await t.siblingKey(owner.accountId, 'team:other');
    personal = (await upload(t, owner.apiKey, png(320, 240, false), 'image/png', 'personal.png')).asset;
    teamAsset = (await upload(t, team, png(320, 240, false), 'image/png', 'team.png')).asset;
  });
  afterAll(async () => t?.close());

  const get = (key: string, id: string) => t.call('GET', `/api/v1/assets/${id}`, { key });

  it('lists the library newest first with a cursor, filtered by kind', async () => {
    const { apiKey } = await t.account(UNLOCKED);
    const made = [];
    for (const [i, bytes] of [png(300, 300, false), jpg(300, 300), wav(0.5)].entries())
      made.push(
        (await upload(t, apiKey, bytes, i === 2 ? 'audio/wav' : i === 1 ? 'image/jpeg' : 'image/png', `f${i}`)).asset,
      );
    const first = await t.call('GET', '/api/v1/assets?limit=2', { key: apiKey });
    expectOk(first);
    expect(first.body.data.items.map((a: any) => a.assetId)).toEqual([made[2].assetId, made[1].assetId]);
    expect(first.body.data.nextCursor).toEqual(expect.any(String));
    const second = await t.call('GET', `/api/v1/assets?limit=2&cursor=${first.body.data.nextCursor}`, { key: apiKey });
    expect(second.body.data).toMatchObject({ items: [{ assetId: made[0].assetId }], nextCursor: null });
    const images = await t.call('GET', '/api/v1/assets?kind=image', { key: apiKey });
    expect(images.body.data.items.map((a: any) => a.kind)).toEqual(['image', 'image']);
    expectError(await t.call('GET', '/api/v1/assets?kind=spreadsheet', { key: apiKey }), 400, 40008);
    expectError(await t.call('GET', '/api/v1/assets?limit=0', { key: apiKey }), 400, 40008);
    expectError(await t.call('GET', '/api/v1/assets?cursor=@@', { key: apiKey }), 400, 40008);
    const usage = await t.call('GET', '/api/v1/assets/usage', { key: apiKey });
    expect(usage.body.data).toMatchObject({
      plan: 'basic',
      unlocked: true,
      assetCount: 3,
      usedBytes: made.reduce((sum, a) => sum + a.bytes, 0),
    });
  });

  it('a personal key and its sibling personal key reach the personal library', async () => {
    expectOk(await get(owner.apiKey, personal.assetId));
    const r = await get(sibling, personal.assetId);
    expectOk(r);
    expect(r.body.data).toMatchObject({ assetId: personal.assetId, uri: personal.uri, name: 'personal.png' });
  });

  it('a team workspace key reaches that team library, and every key of the team does', async () => {
    expectOk(await get(teamMate, teamAsset.assetId));
    const listed = await t.call('GET', '/api/v1/assets', { key: team });
    expect(listed.body.data.items.map((a: any) => a.assetId)).toEqual([teamAsset.assetId]);
  });

  it('any other library: 404 40402, the same body as an unknown asset apart from request_id', async () => {
    const unknown = withoutRequestId(await get(owner.apiKey, 'a_unknownunknown'));
    expect(unknown).toEqual({ status: 404, code: 40402, msg: 'Asset not found.', data: { param: 'assetId' } });
    const cases: [string, string][] = [
      [stranger.apiKey, personal.assetId],
      [team, personal.assetId],
      [owner.apiKey, teamAsset.assetId],
      [otherTeam, teamAsset.assetId],
      [stranger.apiKey, teamAsset.assetId],
    ];
    for (const [key, id] of cases) {
      expect(withoutRequestId(await get(key, id))).toEqual(unknown);
      expect(
        withoutRequestId(await t.call('PATCH', `/api/v1/assets/${id}`, { key, body: { name: 'stolen' } })),
      ).toEqual(unknown);
      expect(withoutRequestId(await t.call('DELETE', `/api/v1/assets/${id}`, { key }))).toEqual(unknown);
    }
    expect((await get(owner.apiKey, personal.assetId)).body.data.name).toBe('personal.png');
  });

  it('in a generation request another library’s asset is refused exactly like an unknown one', async () => {
    const { accountId } = stranger;
    const refuse = async (key: string, ref: string) => {
      const r = await createTask(t, key, { model: FAMILY_C3, input: { reference_image_urls: [ref] } });
      expectError(r, 400, 40001);
      return r.body.data.errors;
    };
    const unknown = await refuse(stranger.apiKey, 'service://a/a_unknownunknown');
    expect(unknown).toEqual([
      {
        path: 'input.reference_image_urls[0]',
        rule: 'asset',
        message: 'input.reference_image_urls[0] names an asset that does not exist in your library.',
      },
    ]);
    expect(await refuse(stranger.apiKey, personal.uri)).toEqual(unknown);
    expect(await refuse(team, personal.uri)).toEqual(unknown);
    expect(await refuse(owner.apiKey, teamAsset.uri)).toEqual(unknown);
    expect(await t.wallet(accountId)).toMatchObject({ available: UNLOCKED, held: 0 });
    // Its own library's asset is accepted.
    expectOk(
      await createTask(t, teamMate, { model: FAMILY_C3, input: { reference_image_urls: [teamAsset.uri] } }),
      202,
    );
  });

  it('rename changes the name only; the uri stays', async () => {
    const r = await t.call('PATCH', `/api/v1/assets/${personal.assetId}`, {
      key: owner.apiKey,
      body: { name: 'Hero' },
    });
    expectOk(r);
    expect(r.body.data).toMatchObject({ assetId: personal.assetId, uri: personal.uri, name: 'Hero' });
    expect((await get(sibling, personal.assetId)).body.data.name).toBe('Hero');
    const bad = await t.call('PATCH', `/api/v1/assets/${personal.assetId}`, {
      key: owner.apiKey,
      body: { name: '', extra: true },
    });
    expectError(bad, 400, 40001);
    expect(bad.body.data.errors.map((e: any) => [e.path, e.rule])).toEqual([
      ['extra', 'unknown_field'],
      ['name', 'minLength'],
    ]);
  });

  it('delete removes the file; the uri no longer resolves anywhere', async () => {
    const asset = (await upload(t, owner.apiKey, png(300, 300, false), 'image/png', 'doomed.png')).asset;
    const preview = asset.preview;
    const r = await t.call('DELETE', `/api/v1/assets/${asset.assetId}`, { key: owner.apiKey });
    expectOk(r);
    expect(r.body.data).toEqual({ assetId: asset.assetId, deleted: true });
    expectError(await get(owner.apiKey, asset.assetId), 404, 40402);
    expectError(await t.call('DELETE', `/api/v1/assets/${asset.assetId}`, { key: owner.apiKey }), 404, 40402);
    expect((await fetch(preview)).status).toBe(404);
    const task = await createTask(t, owner.apiKey, { model: FAMILY_C3, input: { reference_image_urls: [asset.uri] } });
    expectError(task, 400, 40001);
    expect(task.body.data.errors[0]).toMatchObject({ path: 'input.reference_image_urls[0]', rule: 'asset' });
  });

  it('characters: made by the console from 2 to 4 images of one library, listed per library, usable as elements', async () => {
    const images = [];
    for (let i = 0; i < 3; i++)
      images.push((await upload(t, owner.apiKey, png(300 + i, 300, false), 'image/png', `fox${i}.png`)).asset);
    const audio = (await upload(t, owner.apiKey, wav(0.5), 'audio/wav', 'x.wav')).asset;
    const db = t.service.ctx.db;
    const lines: string[] = [];
    const log = console.log;
    console.log = (line: string) => lines.push(line);
    let codes: (number | undefined)[];
    try {
      codes = [
        await entitiesCommand(
          db,
          'create',
          { account: owner.accountId, name: 'Fox', assets: images.map((a) => a.assetId).join(','), json: true },
          Date.now(),
        ),
        await entitiesCommand(
          db,
          'create',
          { account: owner.accountId, name: 'Solo', assets: images[0].assetId, json: true },
          Date.now(),
        ),
        await entitiesCommand(
          db,
          'create',
          { account: owner.accountId, name: 'Noisy', assets: `${images[0].assetId},${audio.assetId}`, json: true },
          Date.now(),
        ),
        await entitiesCommand(
          db,
          'create',
          {
            account: owner.accountId,
            workspace: 'team:studio',
            name: 'Stolen',
            assets: `${images[0].assetId},${images[1].assetId}`,
            json: true,
          },
          Date.now(),
        ),
      ];
    } finally {
      console.log = log;
    }
    expect(codes).toEqual([0, 1, 1, 1]);
    expect(JSON.parse(lines[1]).error).toMatch(/2 to 4/);
    expect(JSON.parse(lines[2]).error).toMatch(/not image assets/);
    const listed = await t.call('GET', '/api/v1/assets/entities', { key: owner.apiKey });
    expectOk(listed);
    const entity = listed.body.data.items[0];
    expect(listed.body.data.items).toHaveLength(1);
    expect(entity).toMatchObject({
      name: 'Fox',
      assetIds: images.map((a) => a.assetId),
      uri: `service://e/${entity.entityId}`,
      imageUrls: images.map((a) => a.uri),
    });
    expect((await t.call('GET', '/api/v1/assets/entities', { key: team })).body.data.items).toEqual([]);
    const body = (urls: string[]) => ({
      model: O3,
      input: {
        prompt: '@Fox jumps over <<<image_1>>>',
        reference_image_urls: [personal.uri],
        elements: [{ name: 'Fox', image_urls: urls }],
      },
    });
    expectOk(await createTask(t, owner.apiKey, body(entity.imageUrls)), 202);
    const foreign = await createTask(t, owner.apiKey, body([entity.imageUrls[0], teamAsset.uri]));
    expectError(foreign, 400, 40001);
    expect(foreign.body.data.errors).toEqual([
      {
        path: 'input.elements[0].image_urls[1]',
        rule: 'asset',
        message: expect.stringContaining('does not exist in your library'),
      },
    ]);
    // Deleting one of its images takes the character with it.
    expectOk(await t.call('DELETE', `/api/v1/assets/${images[2].assetId}`, { key: owner.apiKey }));
    expect((await t.call('GET', '/api/v1/assets/entities', { key: owner.apiKey })).body.data.items).toEqual([]);
  });
  it('characters: the console deletes one of its library only, audited once, and says when there is none', async () => {
    const images = [];
    for (let i = 0; i < 2; i++)
      images.push((await upload(t, owner.apiKey, png(310 + i, 310, false), 'image/png', `owl${i}.png`)).asset);
    const db = t.service.ctx.db;
    // The command prints its answer: console.log is taken for the call and given back.
    const command = async (sub: string, values: Record<string, unknown>) => {
      const lines: string[] = [];
      const log = console.log;
      console.log = (line: string) => lines.push(line);
      try {
        const code = await entitiesCommand(db, sub, { account: owner.accountId, json: true, ...values }, Date.now());
        return { code, answer: JSON.parse(lines[0]) };
      } finally {
        console.log = log;
      }
    };
    const made = await command('create', { name: 'Owl', assets: images.map((a) => a.assetId).join(',') });
    expect(made.code).toBe(0);
    const entityId: string = made.answer.entityId;
    const names = async () =>
      (await t.call('GET', '/api/v1/assets/entities', { key: owner.apiKey })).body.data.items.map((e: any) => e.name);
    expect(await names()).toContain('Owl');
    for (const [name, { given, want }] of [
      ['another library of the account', { given: { entity: entityId, workspace: 'team:studio' }, want: 1 }],
      ['an unknown character', { given: { entity: 'e_unknown' }, want: 1 }],
      ['its own library', { given: { entity: entityId }, want: 0 }],
      ['again, once gone', { given: { entity: entityId }, want: 1 }],
    ] as const) {
      const deleted = await command('delete', given);
      expect({ name, ...deleted }).toEqual({ name, code: want, answer: { deleted: want === 0 } });
    }
    expect(await names()).not.toContain('Owl');
    const audited = await db.kysely
      .selectFrom('audit_log')
      .select(['action', 'target'])
      .where('action', '=', 'entity.delete')
      .where('target', '=', entityId)
      .execute();
    expect(audited).toEqual([{ action: 'entity.delete', target: entityId }]);
  });
});
