import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BODY_ERROR_CLASSES } from '../../generator/load/profile.js';
import { FAILURE_CLASSES } from '../../runtime/deployments/upstream-error.js';
import { ACME_PROFILE } from '../support/acme-profile.js';
import { loadCatalogue } from '../../generator/load/catalogue.js';
import { copySpec, loadError, runGeneratorCheck } from '../support/spec-copy.js';

const FILE = 'spec/providers/acme.yaml';

/** `line:col` of the first occurrence of `needle` in `text` (1-based, as the generator reports). */
function at(text: string, needle: string): string {
  const offset = text.indexOf(needle);
  if (offset < 0) throw new Error(`"${needle}" is not in the profile`);
  const before = text.slice(0, offset).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

/** One broken edit of the acme profile per row; the problem must be reported at the place `where` marks. */
const BROKEN: [string, { edit: (text: string) => string; where: string; want: string }][] = [
  [
    'an unquoted placeholder (YAML reads {input} as a map with a null value)',
    {
      edit: (t) => t.replace('params: "{input}"', 'params: {input}'),
      where: 'params:',
      want: '{input} is read by YAML as a map with a null value: quote it ("{input}")',
    },
  ],
  [
    'a placeholder that names no catalogue field',
    {
      edit: (t) => t.replace('"{input.prompt}"', '"{input.promt}"'),
      where: 'text:',
      want: 'placeholder {input.promt} names nothing in a submit',
    },
  ],
  [
    'a placeholder the poll cannot know (no handle captures it)',
    {
      edit: (t) => t.replace('path: /v2/renders/{id}', 'path: /v2/renders/{idd}'),
      where: 'path: /v2/renders/{idd}',
      want: 'placeholder {idd} names nothing in a poll',
    },
  ],
  [
    'a state mapped to something other than the five',
    {
      edit: (t) => t.replace('done: succeeded', 'done: finished'),
      where: 'done:',
      want: '"finished" is not a state (queued, running, succeeded, failed, canceled)',
    },
  ],
  [
    'a succeeded state and no result',
    {
      edit: (t) => t.replace('result:\n  urls: render.files[*].href\n', ''),
      where: 'states:',
      want: 'a state maps to succeeded, but the profile has no result',
    },
  ],
  [
    'a malformed JSON path',
    {
      edit: (t) => t.replace('render.files[*].href', 'render.files[*.href'),
      where: 'urls:',
      want: 'malformed JSON path "render.files[*.href"',
    },
  ],
  [
    'a failure class that does not exist',
    {
      edit: (t) => t.replace('42: busy', '42: sleepy'),
      where: '42:',
      want: '"sleepy" is not a failure class',
    },
  ],
  [
    'unknown codes classed as a fault of the deployment (one account would cool it for everyone)',
    {
      edit: (t) => t.replace('  reason: status.message\n', '  reason: status.message\n  otherwise: server\n'),
      where: 'otherwise:',
      want: 'an unknown code cannot be server',
    },
  ],
  [
    'an unknown key',
    {
      edit: (t) => t.replace('  handle: { id: render.uid }', '  handle: { id: render.uid }\n  retries: 3'),
      where: 'retries:',
      want: 'unknown key "retries"',
    },
  ],
];

/** The acme profile with a `find` section (issue 37, point 2) before its probe. */
const withFind = (find: string, text = ACME_PROFILE) => text.replace(/^probe: /m, `find:\n${find}probe: `);
const LIST = [
  '  list:',
  '    path: /v2/renders?limit=100',
  '    items: renders[*]',
  '    handle: { id: uid }',
  '    createdAt: created',
  '    match: { engine: "{upstreamModel}", text: "{input.prompt}" }',
  '',
].join('\n');
const BY_ID = '  byId: { path: "/v2/renders?reference={taskId}", handle: { id: render.uid } }\n';
const WRITES_ID = (t: string) =>
  t.replace('    text: "{input.prompt}"\n', '    text: "{input.prompt}"\n    reference: "{taskId}"\n');

/** One broken `find` per row: each adds its own section, so they are not combined with the rows above. */
const BROKEN_FIND: [string, { edit: (text: string) => string; where: string; want: string }][] = [
  [
    'an unknown key in a list call',
    {
      edit: (t) => withFind(`${LIST}    order: newest\n`, t),
      where: 'order:',
      want: 'unknown key "order"',
    },
  ],
  [
    'a list call without the items it reads each job from ([*])',
    {
      edit: (t) => withFind(LIST.replace('items: renders[*]', 'items: renders'), t),
      where: 'items: renders',
      want: 'items must reach every item of the list, with [*]',
    },
  ],
  [
    'a list call matched on nothing of the request (the creation time alone cannot tell our job)',
    {
      edit: (t) =>
        withFind(
          LIST.replace('    match: { engine: "{upstreamModel}", text: "{input.prompt}" }\n', '    match: {}\n'),
          t,
        ),
      where: 'match: {}',
      want: 'match must map JSON paths of an item to what the submit sent there',
    },
  ],
  [
    'a match value that names no field of the request',
    {
      edit: (t) => withFind(LIST.replace('"{input.prompt}"', '"{input.promt}"'), t),
      where: 'text: "{input.promt}"',
      want: 'placeholder {input.promt} names nothing in a match',
    },
  ],
  [
    'a byId path without the id the submit chose',
    {
      edit: (t) => withFind(BY_ID.replace('?reference={taskId}', '/latest'), WRITES_ID(t)),
      where: 'path: "/v2/renders/latest"',
      want: 'a byId path must name {taskId}',
    },
  ],
  [
    'a byId find whose submit writes no {taskId} into the request',
    {
      edit: (t) => withFind(BY_ID, t),
      where: 'submit:',
      want: 'find.byId reads the job by the id the submit chose, but the submit writes no {taskId} into the request',
    },
  ],
  [
    'both forms at once',
    {
      edit: (t) => withFind(`${LIST}${BY_ID}`, WRITES_ID(t)),
      where: 'find:',
      want: 'find must be a map with one of list',
    },
  ],
];

describe('a broken provider profile is refused at generation, at its file:line:col', () => {
  let copy: ReturnType<typeof copySpec> | undefined;
  afterEach(() => copy?.remove());

  it('the acme profile as written loads (the rows below each break one thing)', async () => {
    copy = copySpec();
    writeFileSync(join(copy.root, FILE), ACME_PROFILE);
    expect(runGeneratorCheck(copy.root).stderr).not.toContain('acme.yaml');
  });

  it.each(BROKEN)('%s', (_name, { edit, where, want }) => {
    copy = copySpec();
    const text = edit(ACME_PROFILE);
    writeFileSync(join(copy.root, FILE), text);
    const messages = loadError(copy.root).message.split('\n');
    expect(messages).toContainEqual(expect.stringContaining(`${FILE}:${at(text, where)}: ${want}`));
  });

  it.each([
    ['a list call', (t: string) => withFind(LIST, t)],
    ['a client-chosen id', (t: string) => withFind(BY_ID, WRITES_ID(t))],
  ])(
    'the acme profile with a find by %s loads (issue 37)',
    (_name, edit) => {
      copy = copySpec();
      writeFileSync(join(copy.root, FILE), edit(ACME_PROFILE));
      expect(runGeneratorCheck(copy.root).stderr).not.toContain('acme.yaml');
    },
    120_000,
  );

  it.each(BROKEN_FIND)('find: %s', (_name, { edit, where, want }) => {
    copy = copySpec();
    const text = edit(ACME_PROFILE);
    writeFileSync(join(copy.root, FILE), text);
    const messages = loadError(copy.root).message.split('\n');
    expect(messages).toContainEqual(expect.stringContaining(`${FILE}:${at(text, where)}: ${want}`));
  });

  it('reports every problem of a file at once, through the generator as a maintainer runs it', () => {
    copy = copySpec();
    // Every row but the one that removes the result (with `done` broken, nothing maps to succeeded).
    const rows = BROKEN.filter(([name]) => name !== 'a succeeded state and no result');
    let text = ACME_PROFILE;
    for (const [, { edit }] of rows) text = edit(text);
    writeFileSync(join(copy.root, FILE), text);
    const { status, stderr } = runGeneratorCheck(copy.root);
    expect(status).not.toBe(0);
    for (const [, { where, want }] of rows) expect(stderr).toContain(`${FILE}:${at(text, where)}: ${want}`);
  });

  it('a mapping that leaves a value some model accepts unmapped serves the model in part (derived, issue 37); a model marked serves: all is held to it', () => {
    copy = copySpec();
    const text = ACME_PROFILE.replace(
      'fields: { prompt: text }',
      'fields: { prompt: text, resolution: { values: { 720p: hd } } }',
    );
    writeFileSync(join(copy.root, FILE), text);
    const acme = loadCatalogue(copy.root).providers.find((p) => p.protocol === 'acme')!;
    expect(acme.unmapped['vendor_d/family_d/reference-to-video']?.resolution).toEqual(['768p', '2k']);
    writeFileSync(join(copy.root, FILE), `${text}models:\n  vendor_d/family_d/reference-to-video: { serves: all }\n`);
    expect(loadError(copy.root).message).toMatch(
      /acme\.yaml:\d+:\d+: model vendor_d\/family_d\/reference-to-video accepts resolution .*which this mapping has no value for: map them, or leave out serves: all/,
    );
  });

  it("the failure classes a profile may name are the port's, but unreachable and ambiguous (an answer came)", () => {
    expect([...BODY_ERROR_CLASSES].sort()).toEqual(
      FAILURE_CLASSES.filter((c) => c !== 'unreachable' && c !== 'ambiguous').sort(),
    );
  });
});
