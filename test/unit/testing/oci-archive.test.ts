import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { archiveImageNames } from '../../../testing/node/images';
import { writeOciArchive } from '../../../testing/node/oci-archive';

/** The archive's one layer, listed as `tar -tv` does (owner/group, name). */
function layerListing(archive: string): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oci-test-'));
  try {
    execFileSync('tar', ['-xf', archive, '-C', dir]);
    const index = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8'));
    const blob = (digest: string) => path.join(dir, 'blobs', 'sha256', digest.replace('sha256:', ''));
    const manifest = JSON.parse(fs.readFileSync(blob(index.manifests[0].digest), 'utf8'));
    return execFileSync('tar', ['--numeric-owner', '-tvf', blob(manifest.layers[0].digest)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((line) => {
        const [, owner, , , , name] = line.split(/\s+/);
        return `${owner ?? ''} ${name ?? ''}`;
      });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The image's configuration, as containerd reads it. */
function imageConfig(archive: string): any {
  const index = JSON.parse(execFileSync('tar', ['-xOf', archive, 'index.json'], { encoding: 'utf8' }));
  const read = (digest: string) =>
    JSON.parse(
      execFileSync('tar', ['-xOf', archive, `blobs/sha256/${digest.replace('sha256:', '')}`], { encoding: 'utf8' }),
    );
  return read(read(index.manifests[0].digest).config.digest).config;
}

describe('an OCI image archive made from files on this machine', () => {
  let work: string;
  beforeEach(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'oci-archive-'));
    fs.mkdirSync(path.join(work, 'root', 'var', 'cache', 'web'), { recursive: true });
    fs.writeFileSync(path.join(work, 'root', 'var', 'cache', 'web', 'kept'), 'x');
  });
  afterEach(() => {
    fs.rmSync(work, { recursive: true, force: true });
  });

  // Owners are set with chown, which needs root (as the real node does).
  (process.getuid?.() === 0 ? test : test.skip)(
    'every file is root’s unless the image names an owner for its path, as a package’s user owns its directory',
    () => {
      const archive = writeOciArchive(
        { name: 'web:1', root: path.join(work, 'root'), entrypoint: [], owners: { '/var/cache/web': 101 } },
        path.join(work, 'web.oci.tar'),
      );
      const listing = layerListing(archive);
      expect(listing).toContain('101/101 ./var/cache/web/');
      expect(listing).toContain('0/0 ./var/cache/web/kept');
      expect(listing).toContain('0/0 ./var/');
    },
  );

  test('without owners every file is root’s, whoever owns it on disk', () => {
    fs.chownSync(path.join(work, 'root', 'var', 'cache', 'web', 'kept'), 4242, 4242);
    const archive = writeOciArchive(
      { name: 'web:1', root: path.join(work, 'root'), entrypoint: [] },
      path.join(work, 'web.oci.tar'),
    );
    expect(layerListing(archive).filter((l) => !l.startsWith('0/0 '))).toEqual([]);
  });

  test('one image under several names (a pinned tag beside latest), with its stop signal, user and command', () => {
    const archive = writeOciArchive(
      {
        name: 'busybox:latest',
        alsoNamed: ['busybox:1.37.0'],
        root: path.join(work, 'root'),
        entrypoint: [],
        cmd: ['sh'],
        user: '0',
        stopSignal: 'SIGQUIT',
      },
      path.join(work, 'busybox.oci.tar'),
    );
    expect(archiveImageNames(archive)).toEqual(['busybox:latest', 'busybox:1.37.0']);
    expect(imageConfig(archive)).toEqual({ Entrypoint: [], Cmd: ['sh'], User: '0', StopSignal: 'SIGQUIT' });
  });
});
