// @store-suite: uploads cut at their limits leave nothing in the store (vitest.config.ts runs it on the local and the S3 store).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { catalogue } from '../../generated/catalogue.js';
import { createTask, expectError, expectOk } from '../http/helpers.js';
import { waitForTerminal } from '../support/service.js';
import { serviceForSuite } from '../support/suite-service.js';
import { clip, png, wav } from '../../support/media/fixtures.js';
import { UNLOCKED, upload, taskLedger } from './support.js';

/**
 * Issue 21 item 1: a length limit is checked when the task is accepted whenever the lengths it
 * needs are known then (library assets carry their measured length); only an external link's
 * length waits for generation. The rows come from the generated catalogue: every model, every
 * video or audio reference field whose limits have a total or a per-clip maximum. A limit the
 * specification says the model enforces during generation (`checked: generation-published`) is
 * accepted and then fails the task with the hold released.
 */

type Range = { min?: number; max?: number };
type Limit = { totalSeconds?: Range; clipSeconds?: Range; checked: string };
interface Target {
  id: string;
  field: string;
  kind: 'video' | 'audio';
  limit: Limit;
  maxItems: number;
}

const MEDIA = {
  video: { bytes: (s: number) => clip(s), type: 'video/mp4', file: 'clip.mp4' },
  audio: { bytes: (s: number) => wav(s), type: 'audio/wav', file: 'tone.wav' },
};
/** A link that never resolves: its length is unknown at acceptance, and fetching it fails. */
const EXTERNAL = 'https://clip.invalid/reference';

/** The specification's statement that a model enforces its reference limits during generation (family_c 3.0). */
const PUBLISHED_AT_GENERATION = /enforced during generation, not when the task is accepted/;

const TARGETS: Target[] = [...catalogue.values()].flatMap(({ info }) =>
  info.referenceFields.flatMap(([field, kind]) => {
    const limit = info.referenceLimits[kind] as Limit | undefined;
    if (
      (kind !== 'video' && kind !== 'audio') ||
      !limit ||
      (limit.totalSeconds?.max === undefined && limit.clipSeconds?.max === undefined)
    )
      return [];
    const maxItems = (info.inputSchema.properties[field] as { maxItems?: number }).maxItems ?? 1;
    return [{ id: info.id, field, kind, limit, maxItems }];
  }),
);

interface Row {
  /** Lengths of the library clips, in seconds. */
  assets: number[];
  /** Whether an external link is added after them. */
  external: boolean;
  /** What acceptance answers: the rule a 400 names, or 202. */
  want: { refused: 'totalSeconds' | 'clipSeconds'; seconds?: number } | 'accepted';
}

/** The rows of one target: over the total, known lengths over it beside a link, under it, a link under it, a clip too long. */
function rowsOf(target: Target): [string, Row][] {
  const { limit, maxItems: n } = target;
  const rows: [string, Row][] = [];
  const total = limit.totalSeconds?.max;
  const clipMax = limit.clipSeconds?.max ?? 60;
  if (total !== undefined && n >= 2) {
    const over = Math.ceil((total + 1) / n);
    const overWithLink = Math.ceil((total + 1) / (n - 1));
    const under = Math.floor(total / n);
    if (over <= clipMax)
      rows.push([
        `${n} clips of ${over} s (${n * over} s) over the ${total} s total`,
        { assets: Array(n).fill(over), external: false, want: { refused: 'totalSeconds', seconds: n * over } },
      ]);
    if (overWithLink <= clipMax) {
      rows.push([
        `${n - 1} known clips of ${overWithLink} s (${(n - 1) * overWithLink} s) already over the total, and a link`,
        {
          assets: Array(n - 1).fill(overWithLink),
          external: true,
          want: { refused: 'totalSeconds', seconds: (n - 1) * overWithLink },
        },
      ]);
    }
    if (under >= (limit.clipSeconds?.min ?? 1)) {
      rows.push([
        `${n} clips of ${under} s (${n * under} s) within the total`,
        { assets: Array(n).fill(under), external: false, want: 'accepted' },
      ]);
      rows.push([
        `${n - 1} clips of ${under} s within the total and a link of unknown length`,
        { assets: Array(n - 1).fill(under), external: true, want: 'accepted' },
      ]);
    }
  }
  if (limit.clipSeconds?.max !== undefined)
    rows.push([
      `one clip of ${clipMax + 1} s, over the ${clipMax} s per clip`,
      { assets: [clipMax + 1], external: false, want: { refused: 'clipSeconds' } },
    ]);
  return rows;
}

/** The generated "base input accepted" vector of a model: a valid input to build on. */
function baseInput(id: string): Record<string, unknown> {
  const vectors = JSON.parse(readFileSync(new URL(`../../generated/vectors/${id}.json`, import.meta.url), 'utf8')) as {
    cases: { name: string; input: Record<string, unknown> }[];
  };
  return structuredClone(vectors.cases.find((c) => c.name === 'base input accepted')!.input);
}

const TABLE = TARGETS.flatMap((target) =>
  rowsOf(target).map(([name, row]) => [`${target.id} ${target.field}: ${name}`, { target, row }] as const),
);

describe('a length limit is checked at acceptance whenever the lengths are known (issue 21 item 1)', () => {
  const svc = serviceForSuite();

  it('covers every model with a reference length limit, from the catalogue', () => {
    const ids = new Set(TARGETS.map((target) => target.id));
    expect(ids).toContain('vendor_d/family_d/reference-to-video');
    expect(ids).toContain('vendor_c/4.0/reference-to-video');
    expect(TABLE.length).toBeGreaterThanOrEqual(ids.size);
    // A limit is marked for generation exactly where the specification publishes it.
    for (const target of TARGETS) {
      const published = PUBLISHED_AT_GENERATION.test(catalogue.get(target.id)!.info.notes.join(' '));
      expect([target.id, target.limit.checked]).toEqual([target.id, published ? 'generation-published' : 'acceptance']);
    }
  });

  it.each(TABLE)(
    '%s',
    async (_name, { target, row }) => {
      const { apiKey, accountId } = await svc.t.account(UNLOCKED);
      const model = catalogue.get(target.id)!.info;
      const input = baseInput(target.id);
      // The base vector's links are replaced by library files: images that meet every image limit, no other reference.
      for (const [field, kind] of model.referenceFields) {
        if (!(field in input) || field === target.field) continue;
        if (kind !== 'image') delete input[field];
        else {
          const image = (await upload(svc.t, apiKey, png(400, 400, false), 'image/png', 'opaque.png')).asset.uri;
          input[field] = Array.isArray(input[field]) ? (input[field] as unknown[]).map(() => image) : image;
        }
      }
      const media = MEDIA[target.kind];
      const refs: string[] = [];
      for (const seconds of row.assets)
        refs.push((await upload(svc.t, apiKey, media.bytes(seconds), media.type, media.file)).asset.uri);
      if (row.external) refs.push(`${EXTERNAL}.${target.kind === 'video' ? 'mp4' : 'wav'}`);
      input[target.field] = refs;
      const body = { model: target.id, input };
      // Deferred to generation only where the specification publishes it for the model (its notes say so), whatever the YAML marks.
      const atGeneration = PUBLISHED_AT_GENERATION.test(model.notes.join(' '));

      const r = await createTask(svc.t, apiKey, body);
      if (row.want !== 'accepted' && !atGeneration) {
        // Refused before anything is charged: 400 with the asset error at the field, no task, nothing held.
        expectError(r, 400, 40001);
        const issue = r.body.data.errors.find(
          (e: { rule: string }) => e.rule === (row.want as { refused: string }).refused,
        );
        expect(issue, JSON.stringify(r.body.data.errors)).toBeDefined();
        if (row.want.refused === 'totalSeconds') {
          expect(issue).toEqual({
            path: `input.${target.field}`,
            rule: 'totalSeconds',
            message: `The clips in input.${target.field} last ${row.want.seconds} s in all; at most ${target.limit.totalSeconds!.max} s are accepted.`,
          });
          // The quote refuses it too, in the caller's language.
          const quote = await svc.t.call('POST', '/api/v1/jobs/quote', {
            key: apiKey,
            body,
            headers: { 'accept-language': 'de-DE' },
          });
          expectError(quote, 400, 40001);
          expect(quote.body.data.errors).toContainEqual({
            path: `input.${target.field}`,
            rule: 'totalSeconds',
            message: `Die Clips in input.${target.field} sind insgesamt ${row.want.seconds} s lang; zulässig sind höchstens ${target.limit.totalSeconds!.max} s.`,
          });
        } else expect(issue.path).toBe(`input.${target.field}[0]`);
        expect(await svc.t.wallet(accountId)).toEqual({ available: UNLOCKED, held: 0, spent: 0, purchased: UNLOCKED });
        expect(
          await svc.t.service.ctx.db.kysely
            .selectFrom('tasks')
            .select('id')
            .where('account_id', '=', accountId)
            .execute(),
        ).toEqual([]);
        await svc.t.checkLedger(accountId);
        return;
      }
      // Accepted: the lengths are within the limit, or one is unknown until the task runs, or the model publishes generation-time checks.
      expectOk(r, 202);
      const done = await waitForTerminal(svc.t, apiKey, r.body.data.taskId, 20_000);
      const entries = await taskLedger(svc.t, done.taskId);
      expect(entries[0]).toEqual({ kind: 'hold', amount: r.body.data.maxCredits });
      if (row.want !== 'accepted' && row.external) {
        // Published generation-time checks: the link is fetched first when the task runs, and fails there.
        expect(done).toMatchObject({ state: 'failed', errorCode: 'reference_unreachable', credits: 0 });
      } else if (row.want !== 'accepted') {
        expect(done).toMatchObject({ state: 'failed', errorCode: 'reference_invalid', credits: 0 });
        expect(done.errorMessage).toContain(
          row.want.refused === 'totalSeconds'
            ? `last ${row.want.seconds} s in all`
            : `input.${target.field}[0] is ${row.assets[0]} s long`,
        );
      } else if (row.external) {
        // The link is fetched when the task runs; it does not resolve, so the task fails there and the hold goes back.
        expect(done).toMatchObject({ state: 'failed', errorCode: 'reference_unreachable', credits: 0 });
      } else if (done.state === 'failed') {
        // Within every length limit: a failure can only come from another generation-time limit (family_c's 16 fps minimum).
        expect(atGeneration).toBe(true);
        expect(done.errorMessage).not.toMatch(/in all|s long/);
      } else expect(done.state).toBe('succeeded');
      if (done.state === 'failed')
        expect(await svc.t.wallet(accountId)).toEqual({ available: UNLOCKED, held: 0, spent: 0, purchased: UNLOCKED });
      await svc.t.checkLedger(accountId);
    },
    60_000,
  );
});
