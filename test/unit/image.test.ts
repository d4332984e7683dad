import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_IMAGE, DEFAULT_IMAGE_TAG, NON_ROOT_UID } from '../../constructs';

const ROOT = path.resolve(__dirname, '..', '..');

describe('the reconciler image', () => {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'operator', 'Dockerfile'), 'utf8');

  test('the constructs default to the image the Dockerfile builds, tagged with the kit version', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(DEFAULT_IMAGE_TAG).toBe(pkg.version);
    expect(dockerfile).toContain(`-t ${DEFAULT_IMAGE}:${DEFAULT_IMAGE_TAG}`);
  });

  test('is multi-stage, runs as the non-root uid the Deployment expects, with the bundle as entry point', () => {
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(new RegExp(`^USER ${NON_ROOT_UID}:${NON_ROOT_UID}$`, 'm'));
    expect(dockerfile).toMatch(/^ENTRYPOINT \[.*"\/app\/main\.js"\]$/m);
  });

  test("runs a supported Node.js LTS (22), and bundles the entry point given as ENTRY (the kit's by default)", () => {
    expect(dockerfile).toMatch(/^FROM node:22-/m);
    expect(dockerfile).toMatch(/^FROM gcr\.io\/distroless\/nodejs22-/m);
    expect(dockerfile).toMatch(/^ARG ENTRY=operator\/main\.ts$/m);
    expect(dockerfile).toContain('esbuild "$ENTRY" --bundle');
  });

  test("a user's entry point bundles the same way: the StaticSite example's reconciler", () => {
    const bundle = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-bundle-')), 'main.js');
    execFileSync(
      process.execPath,
      [path.join(ROOT, 'operator', 'bundle.mjs'), bundle, 'examples/static-site/main.ts'],
      { cwd: ROOT, stdio: 'ignore' },
    );
    const bad = spawnSync(process.execPath, [bundle, '--controllers=memcached'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('unknown controller(s) memcached; known: staticsite');
  }, 60_000);

  test('the esbuild bundle runs on its own: --help, and a clear error for a bad flag', () => {
    const bundle = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-bundle-')), 'main.js');
    execFileSync(process.execPath, [path.join(ROOT, 'operator', 'bundle.mjs'), bundle], { cwd: ROOT, stdio: 'ignore' });
    const help = spawnSync(process.execPath, [bundle, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--leader-elect');
    const bad = spawnSync(process.execPath, [bundle, '--controllers=nope'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(
      'unknown controller(s) nope; known: memcached, etcdcluster, crontab, application, webapp, database',
    );
  }, 60_000);
});
