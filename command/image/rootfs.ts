/**
 * The image's base root file system, from the distribution's packages, without a container
 * registry: mmdebstrap unpacks the packages, then everything that only a shell or a package
 * manager would use is removed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BASE_SYSTEM, IMAGE_USER } from './definition';
import { run } from './tools';

/** The apt sources mmdebstrap fetches from: the machine's own, so a mirror or proxy it uses works. */
export function aptSourcesFile(): string | undefined {
  return ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'].find(
    (f) => fs.existsSync(f) && fs.readFileSync(f, 'utf8').trim() !== '',
  );
}

/**
 * Writes, for each unpacked package, its control data to `var/lib/dpkg/status.d/<package>` (the
 * layout distroless images use), so image scanners can tell which package versions are inside.
 * Runs as mmdebstrap's customize hook, while the downloaded packages are still there.
 */
const PACKAGE_LIST_HOOK = [
  'mkdir -p "$1/var/lib/dpkg/status.d"',
  'for deb in "$1"/var/cache/apt/archives/*.deb; do',
  '  name=$(dpkg-deb --field "$deb" Package)',
  '  { dpkg-deb --field "$deb"; echo "Status: install ok installed"; } > "$1/var/lib/dpkg/status.d/$name"',
  'done',
].join('\n');

/** What is removed after unpacking: documentation, package manager state, device nodes, tools. */
const REMOVED = [
  'dev',
  'etc/apt',
  'etc/dpkg',
  'etc/debconf.conf',
  'usr/bin',
  'usr/sbin',
  'usr/share/man',
  'usr/share/info',
  'usr/share/lintian',
  'usr/share/gdb',
  'usr/share/perl5',
  'usr/share/debconf',
  'usr/share/pixmaps',
  // glibc's iconv modules (8 MB): Node converts text with its own ICU.
  'usr/lib/x86_64-linux-gnu/gconv',
  'var/cache',
  'var/log',
  'var/lib/apt',
  'var/lib/debconf',
];

/** Builds the base root file system into `dir` (which must not exist yet). */
export function buildRootfs(dir: string): void {
  const sources = aptSourcesFile();
  run(
    'mmdebstrap',
    [
      '--quiet',
      '--variant=extract',
      `--include=${BASE_SYSTEM.packages.join(',')}`,
      `--customize-hook=${PACKAGE_LIST_HOOK}`,
      BASE_SYSTEM.release,
      dir,
      ...(sources ? [sources] : []),
    ],
    // Files carry the base layer's own time (see build.ts), not the project's.
    { env: { SOURCE_DATE_EPOCH: '0' } },
  );
  trim(dir);
  writeUsers(dir);
  writeCaBundle(dir);
  for (const d of ['dev', 'tmp', `home/${IMAGE_USER.name}`]) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.chmodSync(path.join(dir, 'tmp'), 0o1777);
  fs.chownSync(path.join(dir, 'home', IMAGE_USER.name), IMAGE_USER.uid, IMAGE_USER.uid);
}

function trim(dir: string): void {
  for (const p of REMOVED) fs.rmSync(path.join(dir, p), { recursive: true, force: true });
  // Keep each package's copyright file (its license), drop the rest of its documentation.
  const docs = path.join(dir, 'usr', 'share', 'doc');
  for (const pkg of fs.existsSync(docs) ? fs.readdirSync(docs) : []) {
    for (const f of fs.readdirSync(path.join(docs, pkg))) {
      if (f !== 'copyright') fs.rmSync(path.join(docs, pkg, f), { recursive: true, force: true });
    }
  }
  // dpkg's own state besides the package list above is of no use without dpkg.
  const dpkg = path.join(dir, 'var', 'lib', 'dpkg');
  for (const f of fs.existsSync(dpkg) ? fs.readdirSync(dpkg) : []) {
    if (f !== 'status.d') fs.rmSync(path.join(dpkg, f), { recursive: true, force: true });
  }
}

/** root, nobody and the non-root user, none with a shell (there is none in the image). */
function writeUsers(dir: string): void {
  const { uid, name } = IMAGE_USER;
  const etc = path.join(dir, 'etc');
  fs.writeFileSync(
    path.join(etc, 'passwd'),
    [
      'root:x:0:0:root:/root:/sbin/nologin',
      'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin',
      `${name}:x:${uid}:${uid}:${name}:/home/${name}:/sbin/nologin`,
      '',
    ].join('\n'),
  );
  fs.writeFileSync(path.join(etc, 'group'), ['root:x:0:', 'nogroup:x:65534:', `${name}:x:${uid}:`, ''].join('\n'));
}

/**
 * The CA bundle `update-ca-certificates` would have written (packages are unpacked, not
 * configured): every certificate ca-certificates ships, in name order.
 */
function writeCaBundle(dir: string): void {
  const shipped = path.join(dir, 'usr', 'share', 'ca-certificates');
  const certs = fs
    .readdirSync(shipped, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.crt'))
    .sort();
  const bundle = certs.map((f) => fs.readFileSync(path.join(shipped, f), 'utf8').trimEnd() + '\n').join('');
  fs.mkdirSync(path.join(dir, 'etc', 'ssl', 'certs'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'etc', 'ssl', 'certs', 'ca-certificates.crt'), bundle);
}
