import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_IMAGE, DEFAULT_IMAGE_TAG, NON_ROOT_UID } from '../../../constructs';
import { ENTRYPOINT, IMAGE_USER, imageLabels, NODE_RUNTIME } from '../../../command/image/definition';
import { describeProject } from '../../../command/image/project';
import { commandArgs } from '../../support/command';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/** The folders `bundle` made, removed after the file's tests. */
const bundles: string[] = [];

afterAll(() => {
  for (const dir of bundles) fs.rmSync(dir, { recursive: true, force: true });
});

/** `cdk8s-operator-kit bundle` of an entry point, into a fresh folder. */
function bundle(entry: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-bundle-'));
  bundles.push(dir);
  const out = path.join(dir, 'main.js');
  execFileSync(process.execPath, [...commandArgs(), 'bundle', '--entry', entry, '--output', out], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  return out;
}

describe('the reconciler image', () => {
  test('the constructs default to the image `cdk8s-operator-kit image` builds, tagged with the kit version', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(DEFAULT_IMAGE_TAG).toBe(pkg.version);
    expect(describeProject(ROOT).reference).toBe(`${DEFAULT_IMAGE}:${DEFAULT_IMAGE_TAG}`);
  });

  test('runs as the non-root uid the Deployment expects, with the bundle as entry point', () => {
    expect(IMAGE_USER.uid).toBe(NON_ROOT_UID);
    expect(ENTRYPOINT).toEqual([NODE_RUNTIME.path, '--no-concurrent-recompilation', '/app/main.js']);
  });

  test('runs a supported Node.js LTS (22), pinned to an exact version and integrity', () => {
    expect(NODE_RUNTIME.version).toMatch(/^22\.\d+\.\d+$/);
    expect(NODE_RUNTIME.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
  });

  test('its labels say title, version, source, licenses and revision, and when it was made', () => {
    expect(
      imageLabels({
        title: 't',
        version: '1.2.3',
        source: 'https://example.com/t',
        licenses: 'Apache-2.0',
        revision: 'abc',
        created: 0,
      }),
    ).toMatchObject({
      'org.opencontainers.image.title': 't',
      'org.opencontainers.image.version': '1.2.3',
      'org.opencontainers.image.source': 'https://example.com/t',
      'org.opencontainers.image.licenses': 'Apache-2.0',
      'org.opencontainers.image.revision': 'abc',
      'org.opencontainers.image.created': '1970-01-01T00:00:00.000Z',
    });
  });

  test("a user's entry point bundles the same way: the StaticSite example's reconciler", () => {
    const bad = spawnSync(process.execPath, [bundle('examples/static-site/main.ts'), '--controllers=memcached'], {
      encoding: 'utf8',
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('unknown controller(s) memcached; known: staticsite');
  }, 60_000);

  test('the esbuild bundle runs on its own: --help, and a clear error for a bad flag', () => {
    const main = bundle('reconciler.ts');
    const help = spawnSync(process.execPath, [main, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--leader-elect');
    const bad = spawnSync(process.execPath, [main, '--controllers=nope'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(
      'unknown controller(s) nope; known: memcached, etcdcluster, crontab, application, webapp, database',
    );
  }, 60_000);

  test('the command explains a missing --entry, an unknown command, and a missing entry file, without a stack trace', () => {
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [...commandArgs(), ...args], { cwd: ROOT, encoding: 'utf8' });
    const noEntry = cli('image');
    expect(noEntry.status).toBe(2);
    expect(noEntry.stderr).toContain('image: --entry <file> is required');
    const unknown = cli('imgae');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('unknown command "imgae"');
    const noRunEntry = cli('run');
    expect(noRunEntry.status).toBe(2);
    expect(noRunEntry.stderr).toContain('run: --entry <file> is required');
    const help = cli('--help');
    expect(help.status).toBe(0);
    for (const command of ['image --entry', 'bundle --entry', 'cluster [--audit]', 'run --entry'])
      expect(help.stdout).toContain(`  ${command}`);
    const gone = cli('bundle', '--entry', 'no/such/main.ts');
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(/the entry point .*no\/such\/main\.ts does not exist/);
    expect(gone.stderr).not.toContain('    at ');
  }, 60_000);
});
