/**
 * Proves the type tests bite: the project's `tsc --noEmit` includes them, they compile clean, and
 * the same calls without `@ts-expect-error` fail for the intended reason (the named field or value),
 * not for some unrelated error.
 */
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TYPE_TESTS = resolve(ROOT, 'test/client/types.test.ts');
const VIRTUAL = resolve(ROOT, 'test/client/__type_probe__.ts');

/** Each line is a call that must fail, with a text the diagnostic must mention. */
const MUST_FAIL: [string, string][] = [
  [
    `void client.tasks.create({ model: 'vendor_d/family_d/reference-to-video', input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'], seed: 7 } });`,
    "'seed' does not exist",
  ],
  [
    `void client.tasks.create({ model: 'vendor_d/family_d/reference-to-video', input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'], resolution: '1080p' } });`,
    '"1080p"',
  ],
  [
    `void client.tasks.create({ model: 'vendor_b/family_c-2.6/reference-to-video', input: { prompt: 'x', shot_type: 'customize' } });`,
    '"customize"',
  ],
  [
    `void client.tasks.quote({ model: 'vendor_e/q4-preview/reference-to-video', input: { prompt: 'x', resolution: '8k' } });`,
    '"8k"',
  ],
  [
    `void client.tasks.create({ model: 'vendor_a/family_a-2.5/reference-to-video', input: { prompt: 'x', bitrate_mode: 'high' } });`,
    "'bitrate_mode' does not exist",
  ],
  // A required field left out (family_d requires prompt); fields with a default stay optional.
  [
    `void client.tasks.create({ model: 'vendor_d/family_d/reference-to-video', input: { reference_image_urls: ['https://example.com/a.png'] } });`,
    "'prompt' is missing",
  ],
];
const MUST_PASS = [
  `void client.tasks.create({ model: 'vendor_d/family_d/reference-to-video', input: { prompt: 'x', reference_image_urls: ['https://example.com/a.png'], resolution: '2k', duration_seconds: 8 } }, { wait: 30 });`,
  `void client.tasks.create({ model: 'vendor_a/family_a-2.0/reference-to-video', input: { prompt: 'x', bitrate_mode: 'high', resolution: '4k' } });`,
];

function probeSource(): string {
  const lines = [
    `import { Mediaforge } from '@mediaforge/client';`,
    `const client = new Mediaforge({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' });`,
  ];
  for (const [call] of MUST_FAIL) lines.push(call);
  for (const call of MUST_PASS) lines.push(call);
  return `${lines.join('\n')}\n`;
}

describe('type tests are real', () => {
  const configPath = resolve(ROOT, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(String(d.messageText));
      },
    },
  )!;

  it('the project type check (tsc --noEmit with tsconfig.json) includes the type tests and the client', () => {
    expect(parsed.fileNames).toContain(TYPE_TESTS);
    expect(parsed.fileNames).toContain(resolve(ROOT, 'client/src/index.ts'));
    expect(parsed.options.noEmit).toBe(true);
  });

  it('compiles the type tests clean and rejects each wrong input for the intended reason', () => {
    const source = probeSource();
    const host = ts.createCompilerHost(parsed.options, true);
    const readFile = host.readFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    host.readFile = (name) => (resolve(name) === VIRTUAL ? source : readFile(name));
    host.fileExists = (name) => resolve(name) === VIRTUAL || fileExists(name);
    host.getSourceFile = (name, language, onError, shouldCreate) =>
      resolve(name) === VIRTUAL
        ? ts.createSourceFile(name, source, language, true)
        : getSourceFile(name, language, onError, shouldCreate);
    const program = ts.createProgram([TYPE_TESTS, VIRTUAL], parsed.options, host);

    const describeDiagnostic = (d: ts.Diagnostic) =>
      `${d.file?.fileName}:${d.file ? d.file.getLineAndCharacterOfPosition(d.start!).line + 1 : '?'} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    const typeTestDiagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(TYPE_TESTS));
    expect(typeTestDiagnostics.map(describeDiagnostic)).toEqual([]);

    const probe = program.getSourceFile(VIRTUAL)!;
    const byLine = new Map<number, string[]>();
    for (const d of ts.getPreEmitDiagnostics(program, probe)) {
      const line = probe.getLineAndCharacterOfPosition(d.start!).line;
      byLine.set(line, [...(byLine.get(line) ?? []), ts.flattenDiagnosticMessageText(d.messageText, '\n')]);
    }
    MUST_FAIL.forEach(([call, mention], index) => {
      const messages = byLine.get(2 + index) ?? [];
      expect(messages, `expected a compile error for: ${call}`).not.toEqual([]);
      expect(messages.join('\n'), call).toContain(mention);
    });
    MUST_PASS.forEach((call, index) => expect(byLine.get(2 + MUST_FAIL.length + index), call).toBeUndefined());
    expect([...byLine.keys()].every((line) => line >= 2 && line < 2 + MUST_FAIL.length)).toBe(true);
  }, 120_000);
});
