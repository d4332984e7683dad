/**
 * The Operator Lifecycle Manager on the e2e tier's real node, installed as a cluster runs it: its
 * CRDs, olm-operator and catalog-operator as Deployments in `olm`, and the `operators` namespace
 * with its global OperatorGroup. The programs are built from the Go module proxy by
 * testing/build-olm.sh (OLM v0.38.0, operator-registry's opm v1.61.0, grpc_health_probe) and put
 * into images the node loads; the node's registry then serves them to its pods like any other.
 *
 * A catalog is made as docs/olm.md tells a user to make one: `opm init`, `opm render` of each
 * bundle directory, a channel, `opm validate`, and an image that runs `opm serve` on it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { writeOciArchive } from '../../testing/node/oci-archive';
import { STANDARD_PATH } from '../../testing/node/images';
import { goTool } from './go-tool';

const OLM = goTool({ script: 'testing/build-olm.sh', env: 'OPKIT_E2E_OLM', what: 'OLM' });

/** Builds (or finds cached) OLM's programs and tells the test files through the environment. */
export function provisionOlm(): void {
  OLM.provision();
}

/** The directory testing/build-olm.sh filled (olm, catalog, opm, grpc_health_probe, crds/), or why there is none. */
export function olmPrograms(): { dir?: string; missing?: string } {
  const { bin, missing } = OLM.binary();
  return bin ? { dir: bin } : { missing };
}

/** The image OLM's two controllers run from. */
export const OLM_IMAGE = 'opkit.local/olm:v0.38.0';
/** Where OLM runs, as its chart names it. */
export const OLM_NAMESPACE = 'olm';
/** Where OLM installs operators of every namespace (its global OperatorGroup). */
export const OPERATORS_NAMESPACE = 'operators';

/** OLM's controllers as an image: /bin/olm and /bin/catalog, non-root, as OLM's own image lays them out. */
export function olmImageArchive(programs: string, out: string): string {
  return writeOciArchive(
    {
      name: OLM_IMAGE,
      files: { '/bin/olm': path.join(programs, 'olm'), '/bin/catalog': path.join(programs, 'catalog') },
      entrypoint: ['/bin/olm'],
      env: [`PATH=${STANDARD_PATH}`],
    },
    out,
  );
}

/** The user catalog-operator runs catalog pods as (`--set-workload-user-id`). */
const CATALOG_USER = 1001;

/** Runs the built opm; its output, or an error with what it said. */
function runOpm(programs: string, args: readonly string[]): string {
  return execFileSync(path.join(programs, 'opm'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A bundle directory (manifests/, metadata/) to publish in a catalog, as the `olm-bundle` command wrote it. */
export interface CatalogBundle {
  readonly dir: string;
}

/** The bundle's package and default channel, from its metadata/annotations.yaml. */
function bundleAnnotations(dir: string): { pkg: string; channel: string } {
  const annotations = parse(fs.readFileSync(path.join(dir, 'metadata', 'annotations.yaml'), 'utf8'))?.annotations as
    Record<string, unknown> | undefined;
  const value = (key: string): string => {
    const found = annotations?.[key];
    if (typeof found !== 'string') throw new Error(`${dir}/metadata/annotations.yaml names no ${key}`);
    return found;
  };
  return {
    pkg: value('operators.operatorframework.io.bundle.package.v1'),
    channel: value('operators.operatorframework.io.bundle.channel.default.v1'),
  };
}

/**
 * A file-based catalog in `out`, a package directory for each bundle, made with opm as a user makes
 * one: `opm init <package> --default-channel <channel>`, `opm render <bundle dir>` (the bundle's
 * manifests inline, as `olm.bundle.object`s), a channel naming the bundle, then `opm validate`.
 * Returns the bundles' CSV names.
 */
export function writeFileBasedCatalog(programs: string, bundles: readonly CatalogBundle[], out: string): string[] {
  const opm = (args: string[]): string => runOpm(programs, args);
  const names: string[] = [];
  for (const bundle of bundles) {
    const { pkg, channel } = bundleAnnotations(bundle.dir);
    const rendered = opm(['render', bundle.dir, '--output', 'yaml']);
    const name = /^name: (\S+)$/m.exec(rendered)?.[1];
    if (!name) throw new Error(`opm render ${bundle.dir} wrote no bundle name:\n${rendered.slice(0, 400)}`);
    const channelDoc = [
      '---',
      'schema: olm.channel',
      `package: ${pkg}`,
      `name: ${channel}`,
      'entries:',
      `- name: ${name}`,
    ];
    fs.mkdirSync(path.join(out, pkg), { recursive: true });
    fs.writeFileSync(
      path.join(out, pkg, 'index.yaml'),
      // Each of opm's YAML streams starts with its own `---`.
      [opm(['init', pkg, '--default-channel', channel, '--output', 'yaml']), rendered, ...channelDoc, ''].join('\n'),
    );
    names.push(name);
  }
  opm(['validate', out]);
  return names;
}

/**
 * A catalog image: `opm serve` on the catalog in /configs, port 50051, with grpc_health_probe on
 * PATH for the probes OLM gives a catalog's pod; as `opm generate dockerfile` lays one out.
 */
export function catalogImageArchive(programs: string, catalog: string, name: string, out: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-catalog-root-'));
  try {
    fs.cpSync(catalog, path.join(root, 'configs'), { recursive: true });
    // The serving cache built ahead, as the Dockerfile `opm generate dockerfile` writes does
    // (`opm serve --cache-only`), owned by the user OLM runs catalog pods as (its opm image's, 1001).
    fs.mkdirSync(path.join(root, 'tmp'));
    fs.chmodSync(path.join(root, 'tmp'), 0o1777);
    runOpm(programs, [
      'serve',
      path.join(root, 'configs'),
      '--cache-dir',
      path.join(root, 'tmp', 'cache'),
      '--cache-only',
    ]);
    for (const dir of ['configs', ...fs.readdirSync(catalog).map((d) => `configs/${d}`)]) {
      fs.chmodSync(path.join(root, dir), 0o755);
    }
    return writeOciArchive(
      {
        name,
        root,
        files: {
          '/bin/opm': path.join(programs, 'opm'),
          '/bin/grpc_health_probe': path.join(programs, 'grpc_health_probe'),
        },
        owners: Object.fromEntries(
          ['', ...fs.readdirSync(path.join(root, 'tmp', 'cache'), { recursive: true, encoding: 'utf8' })].map((p) => [
            path.posix.join('/tmp/cache', p),
            CATALOG_USER,
          ]),
        ),
        entrypoint: ['/bin/opm'],
        cmd: ['serve', '/configs', '--cache-dir=/tmp/cache'],
        env: [`PATH=${STANDARD_PATH}`],
      },
      out,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

const RESTRICTED_CONTAINER = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

/** One of OLM's controllers as its chart deploys it. */
function controllerDeployment(name: string, command: string[]): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: OLM_NAMESPACE, labels: { app: name } },
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          serviceAccountName: 'olm-operator-serviceaccount',
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          volumes: [{ name: 'tmpfs', emptyDir: {} }],
          containers: [
            {
              name,
              image: OLM_IMAGE,
              imagePullPolicy: 'IfNotPresent',
              command,
              env: [
                { name: 'OPERATOR_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'OPERATOR_NAME', value: name },
              ],
              ports: [{ name: 'metrics', containerPort: 8080 }],
              readinessProbe: { httpGet: { path: '/healthz', port: 8080 } },
              securityContext: RESTRICTED_CONTAINER,
              volumeMounts: [{ name: 'tmpfs', mountPath: '/tmp' }],
              terminationMessagePolicy: 'FallbackToLogsOnError',
            },
          ],
        },
      },
    },
  };
}

/**
 * OLM's objects beside its CRDs, as its chart makes them: its namespace (Pod Security restricted),
 * the account of its controllers and their rights, the two Deployments, the OLMConfig, and the
 * `operators` namespace with the global OperatorGroup. No status is written to OpenShift's
 * ClusterOperators (`--writeStatusName ""`); catalog pods run as a fixed non-root user.
 */
export function olmObjects(): object[] {
  const namespace = (name: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels },
  });
  return [
    namespace(OLM_NAMESPACE, { 'pod-security.kubernetes.io/enforce': 'restricted' }),
    namespace(OPERATORS_NAMESPACE),
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'olm-operator-serviceaccount', namespace: OLM_NAMESPACE },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:controller:operator-lifecycle-manager' },
      rules: [
        {
          apiGroups: ['*'],
          resources: ['*'],
          verbs: [
            'watch',
            'list',
            'get',
            'create',
            'update',
            'patch',
            'delete',
            'deletecollection',
            'escalate',
            'bind',
          ],
        },
        { nonResourceURLs: ['*'], verbs: ['*'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `olm-operator-binding-${OLM_NAMESPACE}` },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:controller:operator-lifecycle-manager',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'olm-operator-serviceaccount', namespace: OLM_NAMESPACE }],
    },
    controllerDeployment('olm-operator', ['/bin/olm', '--namespace', '$(OPERATOR_NAMESPACE)', '--writeStatusName', '']),
    controllerDeployment('catalog-operator', [
      '/bin/catalog',
      '--namespace',
      OLM_NAMESPACE,
      '--writeStatusName',
      '',
      '--set-workload-user-id=true',
    ]),
    { apiVersion: 'operators.coreos.com/v1', kind: 'OLMConfig', metadata: { name: 'cluster' } },
    {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'global-operators', namespace: OPERATORS_NAMESPACE },
    },
  ];
}
