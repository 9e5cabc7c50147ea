/**
 * The `mediaforge` command (bin/mediaforge.js calls runCli). Help and usage errors come from the
 * command table alone (runtime/cli/commands.ts); a command's module is imported only when it runs.
 * Exit codes: 0 done (and for help), 1 the command failed, 2 the command was called wrongly.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type Command, commandHelp, COMMANDS, findCommand, generalHelp, usageLine } from './commands.js';
import { suggestCommands } from './suggest.js';
import { UsageError } from './usage-error.js';

/** The version in the project's package.json (two levels up from runtime/cli/, three from dist/runtime/cli/). */
function version(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'mediaforge') return pkg.version ?? 'unknown';
    } catch {
      /* not there: try the next level */
    }
  }
  return 'unknown';
}

/** Node's parseArgs errors, in one line a user reads. */
function parseError(error: unknown, command: Command): UsageError {
  const { code, message } = error as { code?: string; message: string };
  const name = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
    return new UsageError(`unknown option ${name} for mediaforge ${command.words.join(' ')}`);
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = command.flags[name.replace(/^--?/, '').split(/[ =]/)[0]];
    return new UsageError(
      flag?.value
        ? `${name.split(/[ =]/)[0]} needs a value (${flag.value})`
        : `${name.split(/[ =]/)[0]} takes no value`,
    );
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return new UsageError(
      `unexpected argument for mediaforge ${command.words.join(' ')}: ${message.match(/'([^']*)'/)?.[1] ?? ''}`,
    );
  return new UsageError(message);
}

/** The commands whose first word is `word` (a group such as `accounts`). */
function groupOf(word: string): Command[] {
  return COMMANDS.filter((c) => c.words[0] === word && c.words.length > 1);
}

/** `mediaforge help accounts`: the usage of each command of the group. */
function groupHelp(word: string): string {
  const lines = groupOf(word).map((c) => `  ${usageLine(c)}\n      ${c.summary}`);
  return `mediaforge ${word} commands:\n\n${lines.join('\n')}\n\n(mediaforge help ${word} COMMAND for a command's options)`;
}

/** `; did you mean accounts?` for a mistyped command word, else nothing. */
function didYouMean(word: string | undefined): string {
  const near = word ? suggestCommands(word) : [];
  return near.length ? `; did you mean ${near.slice(0, 3).join(' or ')}?` : '';
}

function fail(message: string, usage: string): number {
  console.error(`mediaforge: ${message}\n\n${usage}`);
  return 2;
}

/** Runs one command line; resolves to the exit code (`serve` resolves only when it stops). */
export async function run(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) return fail('no command given', generalHelp());
  if (first === '--help' || first === '-h') return print(generalHelp());
  if (first === '--version' || first === '-v') return print(version());
  if (first === 'help') {
    if (rest.length === 0) return print(generalHelp());
    const command = findCommand(rest);
    if (command) return print(commandHelp(command));
    // `help accounts`: the group's commands, each with its usage.
    if (rest.length === 1 && groupOf(rest[0]).length) return print(groupHelp(rest[0]));
    return fail(`no command ${rest.join(' ')}${didYouMean(rest[0])}`, 'mediaforge --help lists the commands');
  }
  const command = findCommand(argv);
  if (!command) {
    const group = groupOf(first);
    if (group.length)
      return fail(
        `${first} needs one of: ${group.map((c) => c.words[1]).join(', ')}`,
        group.map((c) => `  ${usageLine(c)}`).join('\n'),
      );
    return fail(`unknown command: ${first}${didYouMean(first)}`, 'mediaforge --help lists the commands');
  }
  const tail = argv.slice(command.words.length);
  if (tail.includes('--help') || tail.includes('-h')) return print(commandHelp(command));
  let input: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    const options = Object.fromEntries(
      Object.entries(command.flags).map(([name, flag]) => [
        name,
        { type: flag.value ? ('string' as const) : ('boolean' as const), ...(flag.short ? { short: flag.short } : {}) },
      ]),
    );
    input = parseArgs({ args: tail, options, allowPositionals: true, strict: true });
    const wanted = command.args?.length ?? 0;
    if (input.positionals.length > wanted)
      throw new UsageError(
        `unexpected argument for mediaforge ${command.words.join(' ')}: ${input.positionals[wanted]}`,
      );
    if (input.positionals.length < wanted)
      throw new UsageError(
        `mediaforge ${command.words.join(' ')} needs ${command.args![input.positionals.length].name}`,
      );
    for (const name of command.required ?? [])
      if (input.values[name] === undefined || input.values[name] === '') throw new UsageError(`--${name} is required`);
  } catch (error) {
    const usage = error instanceof UsageError ? error : parseError(error, command);
    return fail(
      usage.message,
      `usage: ${usageLine(command)}\n(mediaforge ${command.words.join(' ')} --help for details)`,
    );
  }
  try {
    return await (await command.load())(input);
  } catch (error) {
    if (error instanceof UsageError)
      return fail(
        error.message,
        `usage: ${usageLine(command)}\n(mediaforge ${command.words.join(' ')} --help for details)`,
      );
    console.error(`mediaforge: ${(error as Error).message}`);
    return 1;
  }
}

function print(text: string): number {
  console.log(text);
  return 0;
}

/** bin/mediaforge.js: runs argv and sets the process's exit code. */
export async function runCli(argv: string[]): Promise<void> {
  process.exitCode = await run(argv);
}
