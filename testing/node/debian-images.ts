/**
 * Images of the real programs the seed samples name (memcached, nginx:alpine, postgres:13) and the
 * Database kind's other engine (mysql:8.4), made
 * without a registry from Debian bookworm's packages (mmdebstrap) and laid out as the official
 * images are: their users, paths, entrypoints and the environment their documentation defines, so
 * a kind that would fail with the official image fails here too. docs/testing.md ("The sample
 * images") says where each differs from the image it stands in for.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { STANDARD_PATH } from './images';
import { writeOciArchive } from './oci-archive';

/** Files the images carry that are not in a package (configuration, entrypoints), kept as real files. */
const IMAGE_FILES = path.join(__dirname, 'image-files');

export interface DebianImage {
  /** The name pods give, e.g. `nginx:alpine`. */
  readonly name: string;
  /** Debian packages to unpack (with what they depend on). */
  readonly packages: readonly string[];
  /** Paths (globs of one `*`) its programs never use, left out to keep the image small. */
  readonly unused?: readonly string[];
  /** Lays the unpacked root out as the official image is. */
  readonly layOut?: (root: string) => void;
  /** Path in the image → uid (and gid) that owns it; every other file is root's. */
  readonly owners?: Readonly<Record<string, number>>;
  readonly entrypoint: readonly string[];
  readonly cmd?: readonly string[];
  readonly env?: readonly string[];
  readonly user: string;
  readonly stopSignal?: string;
}

/** Debian's memcached, as the official image runs it (`memcached` as entrypoint, user memcache). */
export const MEMCACHED_IMAGE: DebianImage = {
  name: 'memcached:1.6',
  packages: ['memcached'],
  entrypoint: ['/usr/bin/memcached'],
  user: '11211',
};

const NGINX_UID = 101;

/**
 * `nginx:alpine` from Debian's nginx (1.22): the official image's configuration (user nginx, 101,
 * for the workers; the pid file in /run; temporary files under /var/cache/nginx, writable only by
 * nginx; the welcome page on port 80), logs to the container's stdout and stderr, started by
 * /docker-entrypoint.sh as root.
 */
export const NGINX_IMAGE: DebianImage = {
  name: 'nginx:alpine',
  packages: ['nginx', 'dash', 'coreutils'],
  layOut: (root) => {
    for (const debianOnly of ['sites-available', 'sites-enabled', 'modules-available', 'modules-enabled', 'snippets'])
      fs.rmSync(path.join(root, 'etc/nginx', debianOnly), { recursive: true, force: true });
    const files = path.join(IMAGE_FILES, 'nginx');
    put(root, '/etc/nginx/nginx.conf', fs.readFileSync(path.join(files, 'nginx.conf')));
    put(root, '/etc/nginx/conf.d/default.conf', fs.readFileSync(path.join(files, 'default.conf')));
    put(root, '/usr/share/nginx/html/index.html', fs.readFileSync(path.join(files, 'index.html')));
    put(root, '/usr/share/nginx/html/50x.html', '<html><body><h1>An error occurred.</h1></body></html>\n');
    put(root, '/docker-entrypoint.sh', fs.readFileSync(path.join(files, 'docker-entrypoint.sh')), 0o755);
    fs.mkdirSync(path.join(root, 'docker-entrypoint.d'), { recursive: true });
    fs.mkdirSync(path.join(root, 'var/cache/nginx'), { recursive: true });
    for (const [log, stream] of [
      ['access.log', '/dev/stdout'],
      ['error.log', '/dev/stderr'],
    ] as const) {
      fs.rmSync(path.join(root, 'var/log/nginx', log), { force: true });
      fs.symlinkSync(stream, path.join(root, 'var/log/nginx', log));
    }
    users(root, [['nginx', NGINX_UID, '/var/cache/nginx', '/sbin/nologin']]);
  },
  owners: { '/var/cache/nginx': NGINX_UID },
  entrypoint: ['/docker-entrypoint.sh'],
  cmd: ['nginx', '-g', 'daemon off;'],
  env: [`PATH=${STANDARD_PATH}`],
  user: '0',
  stopSignal: 'SIGQUIT',
};

const POSTGRES_UID = 999;
/** Debian bookworm's PostgreSQL major: the server behind the `postgres:13` name. */
export const DEBIAN_POSTGRES_MAJOR = '15';

/**
 * `postgres:13`, compatible with the official image from Debian's PostgreSQL: user postgres (999),
 * `PGDATA` at /var/lib/postgresql/data, the server's programs on PATH, sockets in
 * /var/run/postgresql, and an entrypoint that honours POSTGRES_PASSWORD, POSTGRES_USER, POSTGRES_DB,
 * POSTGRES_INITDB_ARGS, POSTGRES_HOST_AUTH_METHOD and /docker-entrypoint-initdb.d as the official one
 * does. The server is Debian's (15): a `postgres:<any version>` name gets it.
 */
export function postgresImage(version = '13'): DebianImage {
  const bin = `/usr/lib/postgresql/${DEBIAN_POSTGRES_MAJOR}/bin`;
  return {
    name: `postgres:${version}`,
    packages: [`postgresql-${DEBIAN_POSTGRES_MAJOR}`, 'dash', 'coreutils', 'tzdata'],
    // The JIT's LLVM (a third of the image): without it the server plans without JIT, as with jit=off.
    unused: [
      'usr/lib/x86_64-linux-gnu/libLLVM*',
      'usr/lib/x86_64-linux-gnu/libz3*',
      `usr/lib/postgresql/${DEBIAN_POSTGRES_MAJOR}/lib/llvmjit*`,
      `usr/lib/postgresql/${DEBIAN_POSTGRES_MAJOR}/lib/bitcode`,
    ],
    layOut: (root) => {
      const entrypoint = fs.readFileSync(path.join(IMAGE_FILES, 'postgres', 'docker-entrypoint.sh'));
      put(root, '/usr/local/bin/docker-entrypoint.sh', entrypoint, 0o755);
      fs.symlinkSync('usr/local/bin/docker-entrypoint.sh', path.join(root, 'docker-entrypoint.sh'));
      fs.mkdirSync(path.join(root, 'docker-entrypoint-initdb.d'), { recursive: true });
      fs.mkdirSync(path.join(root, 'var/lib/postgresql/data'), { recursive: true, mode: 0o777 });
      fs.mkdirSync(path.join(root, 'var/run/postgresql'), { recursive: true });
      fs.chmodSync(path.join(root, 'var/lib/postgresql/data'), 0o1777);
      fs.chmodSync(path.join(root, 'var/run/postgresql'), 0o3777);
      users(root, [['postgres', POSTGRES_UID, '/var/lib/postgresql', '/bin/sh']]);
    },
    owners: {
      '/var/lib/postgresql': POSTGRES_UID,
      '/var/lib/postgresql/data': POSTGRES_UID,
      '/var/run/postgresql': POSTGRES_UID,
    },
    entrypoint: ['docker-entrypoint.sh'],
    cmd: ['postgres'],
    env: [
      `PATH=${bin}:${STANDARD_PATH}`,
      `PG_MAJOR=${DEBIAN_POSTGRES_MAJOR}`,
      'PGDATA=/var/lib/postgresql/data',
      'LANG=C.UTF-8',
    ],
    user: String(POSTGRES_UID),
    stopSignal: 'SIGINT',
  };
}

const MYSQL_UID = 999;
/** Debian bookworm's MariaDB: the server behind the `mysql:<version>` name. */
export const DEBIAN_MARIADB_VERSION = '10.11';

/**
 * `mysql:<version>`, laid out as the official image from Debian's MariaDB (10.11), which speaks
 * MySQL's protocol and SQL: user mysql (999), data in /var/lib/mysql, the socket and pid file in
 * /var/run/mysqld, `mysqld`, `mysql`, `mysqladmin` and `mysqldump` on PATH, and an entrypoint
 * that honours MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD, MYSQL_RANDOM_ROOT_PASSWORD,
 * MYSQL_DATABASE, MYSQL_USER, MYSQL_PASSWORD and /docker-entrypoint-initdb.d as the official one
 * documents. MySQL itself is in no Debian release.
 */
export function mysqlImage(version = '8.4'): DebianImage {
  return {
    name: `mysql:${version}`,
    packages: ['mariadb-server-core', 'mariadb-client', 'dash', 'coreutils', 'sed'],
    // Client programs no one runs in it (5 MB each), and the Perl scripts' interpreter.
    unused: [
      ...[
        'binlog',
        'upgrade',
        'slap',
        'check',
        'import',
        'show',
        'conv',
        'plugin',
        'tzinfo-to-sql',
        'access',
        'hotcopy',
      ].map((tool) => `usr/bin/mariadb-${tool}`),
      'usr/bin/perror',
      'usr/bin/innochecksum',
      'usr/bin/perl*',
      'usr/bin/innotop',
      'usr/bin/mytop',
    ],
    layOut: (root) => {
      const files = path.join(IMAGE_FILES, 'mysql');
      put(
        root,
        '/usr/local/bin/docker-entrypoint.sh',
        fs.readFileSync(path.join(files, 'docker-entrypoint.sh')),
        0o755,
      );
      put(root, '/etc/mysql/conf.d/docker.cnf', fs.readFileSync(path.join(files, 'docker.cnf')));
      fs.mkdirSync(path.join(root, 'docker-entrypoint-initdb.d'), { recursive: true });
      fs.mkdirSync(path.join(root, 'var/lib/mysql'), { recursive: true });
      fs.mkdirSync(path.join(root, 'run/mysqld'), { recursive: true });
      fs.chmodSync(path.join(root, 'var/lib/mysql'), 0o1777);
      fs.chmodSync(path.join(root, 'run/mysqld'), 0o3777);
      users(root, [['mysql', MYSQL_UID, '/var/lib/mysql', '/bin/false']]);
    },
    owners: { '/var/lib/mysql': MYSQL_UID, '/run/mysqld': MYSQL_UID },
    entrypoint: ['docker-entrypoint.sh'],
    cmd: ['mysqld'],
    env: [`PATH=${STANDARD_PATH}`],
    user: String(MYSQL_UID),
  };
}

/** The images the seed samples (and a mysql Database) run besides the kit's own and etcd's (made from the plane's build). */
export const SAMPLE_IMAGES: readonly DebianImage[] = [
  MEMCACHED_IMAGE,
  NGINX_IMAGE,
  postgresImage('13'),
  mysqlImage('8.4'),
];

/**
 * The image's archive, cached in `cacheDir` under a name that changes with the image's definition
 * and its files (a new Debian package version reaches it when the cache is cleared).
 */
export function debianImageArchive(image: DebianImage, cacheDir: string): string {
  const archive = path.join(cacheDir, `${image.name.replace(/[/:]/g, '-')}-bookworm-${definitionHash(image)}.oci.tar`);
  if (fs.existsSync(archive)) return archive;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-image-root-'));
  try {
    unpackDebianPackages(image.packages, root);
    for (const unused of image.unused ?? []) removeMatching(root, unused);
    image.layOut?.(root);
    fs.mkdirSync(cacheDir, { recursive: true });
    writeOciArchive({ ...image, root }, `${archive}.tmp`);
    fs.renameSync(`${archive}.tmp`, archive);
    return archive;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Debian bookworm's packages and their dependencies unpacked into `root` (no maintainer scripts run). */
function unpackDebianPackages(packages: readonly string[], root: string): void {
  const sources = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'].find(
    (f) => fs.existsSync(f) && fs.readFileSync(f, 'utf8').trim() !== '',
  );
  execFileSync(
    'mmdebstrap',
    [
      '--quiet',
      '--variant=extract',
      `--include=${packages.join(',')}`,
      'bookworm',
      root,
      ...(sources ? [sources] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SOURCE_DATE_EPOCH: '0' } },
  );
  // What no container program reads: docs, translations, locale sources, apt's state, and the
  // Perl that only Debian's maintainer scripts and wrappers use.
  const unused = ['dev', 'usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale', 'usr/share/i18n'];
  unused.push('var/cache/apt', 'var/lib/apt', 'usr/share/perl', 'usr/lib/x86_64-linux-gnu/perl');
  for (const dir of unused) fs.rmSync(path.join(root, dir), { recursive: true, force: true });
  // As in every image: /run for the programs' run-time files, /var/run the old name of it.
  fs.mkdirSync(path.join(root, 'run'), { recursive: true });
  if (!fs.existsSync(path.join(root, 'var/run'))) fs.symlinkSync('../run', path.join(root, 'var/run'));
}

/** Removes the paths under `root` that `pattern` names (one `*` in its last part at most). */
function removeMatching(root: string, pattern: string): void {
  const dir = path.join(root, path.dirname(pattern));
  const [prefix, suffix] = path.basename(pattern).split('*');
  if (!fs.existsSync(dir)) return;
  for (const name of fs.readdirSync(dir))
    if (suffix === undefined ? name === prefix : name.startsWith(prefix ?? '') && name.endsWith(suffix))
      fs.rmSync(path.join(dir, name), { recursive: true, force: true });
}

/** A file in the image, its directories made as needed. */
function put(root: string, inImage: string, content: string | Buffer, mode = 0o644): void {
  const target = path.join(root, inImage);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, content, { mode });
  fs.chmodSync(target, mode);
}

/** /etc/passwd and /etc/group: root and the image's own users (a group of the same name and id each). */
function users(root: string, own: readonly (readonly [name: string, id: number, home: string, shell: string])[]): void {
  const all = [['root', 0, '/root', '/bin/sh'] as const, ...own];
  put(root, '/etc/passwd', all.map(([n, id, home, shell]) => `${n}:x:${id}:${id}:${n}:${home}:${shell}\n`).join(''));
  put(root, '/etc/group', all.map(([n, id]) => `${n}:x:${id}:\n`).join(''));
}

/** What makes one image differ from another: its definition, the code that makes it, its files. */
function definitionHash(image: DebianImage): string {
  const hash = createHash('sha256')
    .update(JSON.stringify(image))
    .update(image.layOut?.toString() ?? '');
  hash.update(unpackDebianPackages.toString());
  for (const file of fs.readdirSync(IMAGE_FILES, { recursive: true, withFileTypes: true }))
    if (file.isFile()) hash.update(fs.readFileSync(path.join(file.parentPath, file.name)));
  return hash.digest('hex').slice(0, 12);
}
