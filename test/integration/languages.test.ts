/**
 * Every cdk8s language (#69, #84): the kit's ready-made operators, compiled with jsii from the
 * packed kit (jsii/build.ts, as `npm run package:jsii` builds them), composed by a Python cdk8s app
 * with cdk8s, constructs and cdk8s-plus-27 from PyPI, and by a Java app built with Maven on cdk8s
 * and constructs from Maven Central (2.70.47, the newest it serves, below the repository's own),
 * synthesize byte for byte what the same TypeScript app synthesizes; a bad option raises in each
 * language with the TypeScript message.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import {
  CronTabOperator,
  DatabaseOperator,
  EtcdClusterOperator,
  MemcachedOperator,
  MongoDbStorage,
  WebAppOperator,
} from '../../constructs';
import { cachedJsiiBuild, installedVersion } from '../../jsii/build';
import { packKit } from '../support/package';
import { cacheDirectory, releaseVersions } from '../../testing/release-binaries';

jest.setTimeout(600_000);

let work: string;
type Run = (script: string) => { code: number | null; stdout: string; stderr: string };
let python: Run;
/** Python on the lowest cdk8s the package asks for (its peer range's floor, from PyPI). */
let pythonOnLowestCdk8s: Run;
/** The lowest peers the package asks for: what Maven Central serves (it has no cdk8s newer than 2.70.47). */
const JAVA_PEERS = { cdk8s: '2.70.47', constructs: '10.8.1' } as const;

/** The Maven repository jsii-pacmak wrote the kit's Java package to. */
let mavenRepository: string;

/**
 * A virtual environment with cdk8s and constructs from PyPI, at the versions the repository uses
 * unless told (cached); no cdk8s-plus: the kit's package carries its own.
 */
function pythonWithCdk8s(cdk8s = installedVersion('cdk8s')): string {
  const peers = [`cdk8s==${cdk8s}`, `constructs==${installedVersion('constructs')}`];
  const venv = path.join(cacheDirectory(releaseVersions()), '..', `python-${peers.join('-')}`);
  const bin = path.join(venv, 'bin', 'python');
  if (!fs.existsSync(path.join(venv, 'installed'))) {
    fs.rmSync(venv, { recursive: true, force: true });
    run('python3', ['-m', 'venv', venv]);
    run(bin, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...peers]);
    fs.writeFileSync(path.join(venv, 'installed'), peers.join('\n'));
  }
  return bin;
}

function run(command: string, args: readonly string[], cwd?: string): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-languages-'));
  // Built from the packed kit as `npm run package:jsii` builds it; the same kit and facade as the
  // last run's are that run's packages (cached outside the repository).
  const built = cachedJsiiBuild({
    kitTarball: packKit(),
    cacheDir: path.join(cacheDirectory(releaseVersions()), '..', 'jsii-builds'),
  });
  if (!built.mavenRepository) throw new Error(`the jsii build in ${built.dist} has no Java package`);
  mavenRepository = built.mavenRepository;
  // The built wheel beside the cached peers, not in them: the cache stays as PyPI made it.
  const site = path.join(work, 'site');
  const bin = pythonWithCdk8s();
  run(bin, [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    '--no-deps',
    '--target',
    site,
    built.wheel,
  ]);
  python = pythonRunner(bin, site);
  pythonOnLowestCdk8s = pythonRunner(pythonWithCdk8s(JAVA_PEERS.cdk8s), site);
});

/** Runs a script with a virtual environment's Python and the kit's package on its path. */
function pythonRunner(bin: string, site: string): Run {
  return (script) => {
    const r = spawnSync(bin, ['-c', script], {
      cwd: work,
      encoding: 'utf8',
      timeout: 300_000,
      env: { ...process.env, PYTHONPATH: site },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
}

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** Every file an app wrote, by name. */
function synthesized(dir: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]));
}

/** The TypeScript app every language's app is held to: every ready-made operator, with options. */
function typescriptApp(outdir: string): void {
  const app = new App({ outdir });
  const cluster = new Chart(app, 'cluster');
  new MemcachedOperator(new Chart(app, 'memcached'), 'memcached', {
    clusterScope: cluster,
    logLevel: 'debug',
    watchNamespaces: ['shop', 'blog'],
    monitoring: true,
  });
  new EtcdClusterOperator(new Chart(app, 'etcd'), 'etcd', {
    clusterScope: cluster,
    namespace: 'etcd-ops',
    resources: { cpuRequest: '20m', memoryLimit: '512Mi' },
    maxConcurrentReconciles: 2,
  });
  new DatabaseOperator(new Chart(app, 'database'), 'database', {
    clusterScope: cluster,
    imagePullPolicy: 'Always',
    metricsPort: 9090,
    imageTag: '1.2.3',
  });
  new CronTabOperator(new Chart(app, 'crontab'), 'crontab', { clusterScope: cluster, leaderElection: false });
  new WebAppOperator(new Chart(app, 'webapp'), 'webapp', {
    clusterScope: cluster,
    monitoring: { labels: { release: 'kps' }, interval: '1m' },
  });
  new MongoDbStorage(new Chart(app, 'mongodb'), 'storage', {
    replicaSetName: 'rs',
    namespace: 'mongo',
    data: {
      capacity: '2Gi',
      nfs: { server: 'nfs.example.com', paths: ['/exports/rs-0', '/exports/rs-1', '/exports/rs-2'] },
    },
  });
  app.synth();
}

test.each([
  ["the repository's cdk8s", () => python, 'python-dist'],
  [`the lowest cdk8s it asks for (${JAVA_PEERS.cdk8s})`, () => pythonOnLowestCdk8s, 'python-lowest-dist'],
] as const)(
  'a Python app on %s composing every ready-made operator, with options, synthesizes what the TypeScript app does, byte for byte',
  (_, runner, dist) => {
    const outdir = path.join(work, dist);
    const r = runner()(`
from cdk8s import App, Chart
import cdk8s_operator_kit as kit

app = App(outdir=${JSON.stringify(outdir)})
cluster = Chart(app, "cluster")
memcached = kit.MemcachedOperator(Chart(app, "memcached"), "memcached", cluster_scope=cluster,
    log_level=kit.LogLevel.DEBUG, watch_namespaces=["shop", "blog"], monitoring=True)
kit.EtcdClusterOperator(Chart(app, "etcd"), "etcd", cluster_scope=cluster, namespace="etcd-ops",
    resources=kit.OperatorResources(cpu_request="20m", memory_limit="512Mi"), max_concurrent_reconciles=2)
kit.DatabaseOperator(Chart(app, "database"), "database", cluster_scope=cluster,
    image_pull_policy=kit.ImagePullPolicy.ALWAYS, metrics_port=9090, image_tag="1.2.3")
kit.CronTabOperator(Chart(app, "crontab"), "crontab", cluster_scope=cluster, leader_election=False)
kit.WebAppOperator(Chart(app, "webapp"), "webapp", cluster_scope=cluster,
    monitoring=kit.MonitoringOptions(labels={"release": "kps"}, interval="1m"))
kit.MongoDbStorage(Chart(app, "mongodb"), "storage", replica_set_name="rs", namespace="mongo",
    data=kit.MongoDbVolumeOptions(capacity="2Gi", nfs=kit.NfsExports(server="nfs.example.com",
        paths=["/exports/rs-0", "/exports/rs-1", "/exports/rs-2"])))
app.synth()
print(memcached.operator_name, memcached.operator_namespace, ",".join(memcached.crd_names),
      memcached.deployment.name, memcached.service_account.name)
`);
    expect(r.stderr.replace(/^.*(Node 20|!!).*$/gm, '').trim()).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(
      'memcached memcached-system memcacheds.cache.example.com memcached-operator memcached-operator',
    );

    typescriptApp(path.join(work, `typescript-${dist}`));

    const fromPython = synthesized(outdir);
    expect(Object.keys(fromPython)).toHaveLength(7);
    expect(fromPython).toEqual(synthesized(path.join(work, `typescript-${dist}`)));
    // The options reached the objects: not a pair of empty apps.
    expect(fromPython['0001-memcached.k8s.yaml']).toContain('--log-level=debug');
    expect(fromPython['0003-database.k8s.yaml']).toContain('imagePullPolicy: Always');
  },
);

test('a bad option raises in Python with the TypeScript message', () => {
  const r = python(`
from cdk8s import App, Chart
import cdk8s_operator_kit as kit
try:
    kit.MemcachedOperator(Chart(App(), "c"), "memcached", namespace="Not_Valid")
except Exception as e:
    print(e)
`);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(
    'Operator "memcached": namespace "Not_Valid" must be a lower-case DNS label (letters, digits, dashes; at most 63 characters)',
  );
});

/** The kit's Java package's version: the facade's, as its pom names it. */
const kitVersion = () =>
  (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'jsii', 'package.json'), 'utf8')) as { version: string })
    .version;

/**
 * A Java cdk8s app of one class `Main` (its source given), built with Maven against the peers from
 * Maven Central and the kit's jar from the jsii build's Maven repository, then run with `args`.
 */
function javaApp(
  name: string,
  source: string,
  args: readonly string[],
): { code: number | null; stdout: string; stderr: string } {
  const dir = path.join(work, name);
  fs.mkdirSync(path.join(dir, 'src', 'main', 'java'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'src', 'main', 'java', 'Main.java'), source);
  const dependency = (groupId: string, artifactId: string, version: string) =>
    `<dependency><groupId>${groupId}</groupId><artifactId>${artifactId}</artifactId><version>${version}</version></dependency>`;
  fs.writeFileSync(
    path.join(dir, 'pom.xml'),
    `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>${name}</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source>
    <maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <repositories>
    <repository><id>kit</id><url>file://${mavenRepository}</url></repository>
  </repositories>
  <dependencies>
    ${dependency('org.cdk8s', 'cdk8s', JAVA_PEERS.cdk8s)}
    ${dependency('software.constructs', 'constructs', JAVA_PEERS.constructs)}
    ${dependency('io.github.cdk8s-operator-kit', 'cdk8s-operator-kit', kitVersion())}
  </dependencies>
</project>
`,
  );
  // A local repository of the tests' own (cached outside the repository, so Maven Central's
  // artifacts are fetched once): Maven never fetches a release version again once it holds it, so
  // the kit's artifact, the same version rebuilt from other code, is dropped from it first —
  // else a run would compile against the kit an earlier run built (a CI run did).
  const localRepository = path.join(cacheDirectory(releaseVersions()), '..', 'maven-local-repository');
  fs.rmSync(path.join(localRepository, 'io', 'github', 'cdk8s-operator-kit'), { recursive: true, force: true });
  run(
    'mvn',
    [
      '-q',
      '-B',
      `-Dmaven.repo.local=${localRepository}`,
      'compile',
      'dependency:build-classpath',
      '-Dmdep.outputFile=classpath.txt',
    ],
    dir,
  );
  const classpath = [
    path.join(dir, 'target', 'classes'),
    fs.readFileSync(path.join(dir, 'classpath.txt'), 'utf8').trim(),
  ];
  const r = spawnSync('java', ['-cp', classpath.join(path.delimiter), 'Main', ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('a Java app composing every ready-made operator, with options, on cdk8s 2.70.47 from Maven Central, synthesizes what the TypeScript app does, byte for byte', () => {
  const outdir = path.join(work, 'java-dist');
  const r = javaApp(
    'java-app',
    `
import io.github.cdk8soperatorkit.*;
import java.util.List;
import java.util.Map;
import org.cdk8s.App;
import org.cdk8s.AppProps;
import org.cdk8s.Chart;

public class Main {
  public static void main(String[] args) {
    App app = new App(AppProps.builder().outdir(args[0]).build());
    Chart cluster = new Chart(app, "cluster");
    MemcachedOperator memcached = new MemcachedOperator(new Chart(app, "memcached"), "memcached",
        OperatorOptions.builder().clusterScope(cluster).logLevel(LogLevel.DEBUG)
            .watchNamespaces(List.of("shop", "blog")).monitoring(true).build());
    new EtcdClusterOperator(new Chart(app, "etcd"), "etcd", OperatorOptions.builder().clusterScope(cluster)
        .namespace("etcd-ops").resources(OperatorResources.builder().cpuRequest("20m").memoryLimit("512Mi").build())
        .maxConcurrentReconciles(2).build());
    new DatabaseOperator(new Chart(app, "database"), "database", OperatorOptions.builder().clusterScope(cluster)
        .imagePullPolicy(ImagePullPolicy.ALWAYS).metricsPort(9090).imageTag("1.2.3").build());
    new CronTabOperator(new Chart(app, "crontab"), "crontab",
        OperatorOptions.builder().clusterScope(cluster).leaderElection(false).build());
    new WebAppOperator(new Chart(app, "webapp"), "webapp", OperatorOptions.builder().clusterScope(cluster)
        .monitoring(MonitoringOptions.builder().labels(Map.of("release", "kps")).interval("1m").build()).build());
    new MongoDbStorage(new Chart(app, "mongodb"), "storage", MongoDbStorageProps.builder().replicaSetName("rs")
        .namespace("mongo").data(MongoDbVolumeOptions.builder().capacity("2Gi")
            .nfs(NfsExports.builder().server("nfs.example.com")
                .paths(List.of("/exports/rs-0", "/exports/rs-1", "/exports/rs-2")).build()).build()).build());
    app.synth();
    System.out.println(String.join(" ", memcached.getOperatorName(), memcached.getOperatorNamespace(),
        String.join(",", memcached.getCrdNames()), memcached.getDeployment().getName(),
        memcached.getServiceAccount().getName()));
  }
}
`,
    [outdir],
  );
  expect({ code: r.code, stderr: r.stderr.replace(/^.*(Node 20|!!|node\.js).*$/gim, '').trim() }).toEqual({
    code: 0,
    stderr: '',
  });
  expect(r.stdout.trim()).toBe(
    'memcached memcached-system memcacheds.cache.example.com memcached-operator memcached-operator',
  );
  typescriptApp(path.join(work, 'typescript-dist-for-java'));
  const fromJava = synthesized(outdir);
  expect(Object.keys(fromJava)).toHaveLength(7);
  expect(fromJava).toEqual(synthesized(path.join(work, 'typescript-dist-for-java')));
  expect(fromJava['0001-memcached.k8s.yaml']).toContain('--log-level=debug');
  expect(fromJava['0005-webapp.k8s.yaml']).toContain('release: kps');
  process.stdout.write(`[languages] the Java app: ${r.stdout.trim()}; ${Object.keys(fromJava).join(', ')}\n`);
});

test('a bad option throws in Java with the TypeScript message', () => {
  const r = javaApp(
    'java-bad-option',
    `
import io.github.cdk8soperatorkit.*;
import org.cdk8s.App;
import org.cdk8s.Chart;

public class Main {
  public static void main(String[] args) {
    try {
      new MemcachedOperator(new Chart(new App(), "c"), "memcached", OperatorOptions.builder().namespace("Not_Valid").build());
      System.out.println("accepted");
    } catch (RuntimeException e) {
      System.out.println(e.getMessage());
    }
  }
}
`,
    [],
  );
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(
    'Operator "memcached": namespace "Not_Valid" must be a lower-case DNS label (letters, digits, dashes; at most 63 characters)',
  );
});
