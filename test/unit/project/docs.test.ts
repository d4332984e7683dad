/**
 * The docs match the code where a test can tell: the repository paths they name exist, their
 * links lead somewhere, the scripts and commands they tell you to run are there, every flag of
 * the package's command and of the reconciler is on a docs page, and the README stays short.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { COMMAND_HELP, COMMANDS } from '../../../command/cli';
import { FLAG_OPTIONS } from '../../../operator/flags';

const ROOT = path.join(__dirname, '..', '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const pages = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...fs.readdirSync(path.join(ROOT, 'docs', 'operators')).map((f) => `docs/operators/${f}`),
];
const allDocs = pages.map(read).join('\n');

/** Folders of this repository a page may name; other paths (a user's project, build output) are not checked. */
const OWN_FOLDERS = ['constructs', 'operator', 'command', 'testing', 'bench', 'scripts', 'examples', 'docs', '.ci'];

describe.each(pages)('%s', (page) => {
  const text = read(page);

  test('names only paths of this repository that exist', () => {
    const named = [...text.matchAll(/`([\w.-]+\/[\w./-]*)`/g)].map((m) => m[1] ?? '');
    // docs/reconciler.md names the runtime's modules from inside operator/.
    const resolve = (p: string) => (p.startsWith('runtime/') ? `operator/${p}` : p);
    const own = named.map(resolve).filter((p) => OWN_FOLDERS.includes(p.split('/')[0] ?? ''));
    const missing = own.filter((p) => !fs.existsSync(path.join(ROOT, p)));
    expect(missing).toEqual([]);
  });

  test('links to pages and files that exist', () => {
    const links = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1] ?? '');
    const missing = links
      .filter((l) => !/^[a-z]+:/.test(l))
      .filter((l) => !fs.existsSync(path.join(ROOT, path.dirname(page), l)));
    expect(missing).toEqual([]);
  });

  test('runs only npm scripts and commands that exist', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const npmRuns = [...text.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1] ?? '');
    expect(npmRuns.filter((s) => !(s in scripts))).toEqual([]);
    // Command lines: `npx cdk8s-operator-kit <command>`, or a line of a shell block that starts with it.
    const commands = [...text.matchAll(/(?:npx |^\s*(?:\$ )?)cdk8s-operator-kit ([a-z][a-z-]*[a-z])\b/gm)].map(
      (m) => m[1] ?? '',
    );
    expect(commands.filter((c) => !(c in COMMANDS))).toEqual([]);
  });
});

describe("docs/reconciler.md's table of the runtime's folders, where a newcomer looks for a module", () => {
  const page = read('docs/reconciler.md');
  const runtime = path.join(ROOT, 'operator', 'runtime');
  const folders = fs.readdirSync(runtime).filter((f) => fs.statSync(path.join(runtime, f)).isDirectory());
  const rowOf = (folder: string) => page.split('\n').find((line) => line.startsWith(`| \`runtime/${folder}/\` |`));

  test('the runtime is only folders, each with a face', () => {
    expect(fs.readdirSync(runtime).filter((f) => !folders.includes(f))).toEqual([]);
    expect(folders.filter((f) => !fs.existsSync(path.join(runtime, f, 'index.ts')))).toEqual([]);
  });

  test.each(fs.readdirSync(path.join(ROOT, 'operator', 'runtime')))(
    'runtime/%s/ has a row naming each of its files',
    (folder) => {
      const row = rowOf(folder);
      expect(row).toBeDefined();
      const files = fs.readdirSync(path.join(runtime, folder)).filter((f) => f.endsWith('.ts') && f !== 'index.ts');
      expect(files.filter((f) => !row?.includes(`\`${f}\``))).toEqual([]);
    },
  );
});

test('every command has its own --help, and every flag in it is on a docs page', () => {
  expect(Object.keys(COMMAND_HELP).sort()).toEqual(Object.keys(COMMANDS).sort());
  for (const [command, help] of Object.entries(COMMAND_HELP)) {
    const flags = [...help.matchAll(/(?<![\w-])(--[a-z][a-z-]*)/g)].map((m) => m[1] ?? '');
    const undocumented = flags.filter((f) => !allDocs.includes(f));
    expect({ command, undocumented }).toEqual({ command, undocumented: [] });
  }
});

test("every reconciler flag is in docs/reconciler.md's table", () => {
  const page = read('docs/reconciler.md');
  const missing = Object.keys(FLAG_OPTIONS).filter((name) => !page.includes(`| \`--${name}`));
  expect(missing).toEqual([]);
});

test('the README stays an overview: at most 200 lines', () => {
  expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(200);
});
