/**
 * An operator as an Operator Lifecycle Manager bundle, as operator-sdk's `make bundle` writes one:
 * `manifests/` (the ClusterServiceVersion, the CRDs and the other objects OLM installs as they
 * are), `metadata/annotations.yaml` (its package and channel), and `bundle.Dockerfile` (the bundle
 * image). Made from the Operator construct itself, so what OLM installs is what `kubectl apply -f
 * dist/` installs, less what OLM makes for itself (see csv.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import { stringify } from 'yaml';
import { Operator } from '../core/operator';
import type { OperatorProps } from '../core/operator-props';
import { KIT_ICON } from './icon';
import { clusterServiceVersion, type CsvDescription, type SynthesizedObject } from './csv';

export interface OlmBundleProps {
  /** The operator: its props with a name (its controllers and settings). */
  readonly operator: OperatorProps & { readonly name: string };
  /** The bundle's version (SemVer); the CSV is `<name>.v<version>`. @default '0.1.0' */
  readonly version?: string;
  /** The channel it is published in (OLM's recommended names: candidate, fast, stable). @default 'stable' */
  readonly channel?: string;
  /** @default '<Name> Operator' */
  readonly displayName?: string;
  /** @default 'The <name> operator, made with cdk8s-operator-kit: its CRDs, RBAC and reconciler.' */
  readonly description?: string;
  /** @default { name: 'cdk8s-operator-kit' } */
  readonly provider?: CsvDescription['provider'];
  /** Who to ask. @default the kit's maintainers */
  readonly maintainers?: CsvDescription['maintainers'];
  /** @default the kit's repository */
  readonly links?: CsvDescription['links'];
  /** @default ['<name>', 'operator', 'cdk8s'] */
  readonly keywords?: readonly string[];
  /** OperatorHub's categories. @default ['Developer Tools'] */
  readonly categories?: readonly string[];
  /** @default the kit's icon (`KIT_ICON`) */
  readonly icon?: CsvDescription['icon'];
  /** The oldest Kubernetes it runs on. @default '1.30.0' */
  readonly minKubeVersion?: string;
  /** Resources of its kinds, shown by OLM's consoles as examples (`alm-examples`). @default none */
  readonly examples?: readonly object[];
}

const KIT_REPOSITORY = 'https://github.com/cdk8s-operator-kit/cdk8s-operator-kit';
const OLM_PACKAGE_ANNOTATIONS = 'operators.operatorframework.io.bundle';

/** The kinds OLM installs from a bundle's manifests besides the CSV and CRDs, as they are. */
const BUNDLED_KINDS = new Set([
  'Service',
  'ClusterRole',
  'Role',
  'ConfigMap',
  'PodDisruptionBudget',
  'ServiceMonitor',
  'PrometheusRule',
]);

/** The bundle's files, by path relative to its directory. */
export function olmBundle(props: OlmBundleProps): Record<string, string> {
  const name = props.operator.name;
  const objects = synthesize(props.operator);
  const csv = clusterServiceVersion(objects, csvDescription(props, reconcilerImage(objects)));
  return {
    [`manifests/${name}.clusterserviceversion.yaml`]: stringify(csv),
    ...manifestFiles(name, objects),
    ...metadataFiles(name, props.channel ?? 'stable'),
  };
}

/** What the CSV says besides what the objects say: the props, else the defaults documented on them. */
function csvDescription(props: OlmBundleProps, containerImage: string): CsvDescription {
  const name = props.operator.name;
  const d = (value: string | undefined, fallback: string) => value ?? fallback;
  return {
    name,
    version: d(props.version, '0.1.0'),
    displayName: d(props.displayName, `${name.charAt(0).toUpperCase()}${name.slice(1)} Operator`),
    description: d(
      props.description,
      `The ${name} operator, made with cdk8s-operator-kit: its CRDs, RBAC and reconciler.`,
    ),
    provider: props.provider ?? { name: 'cdk8s-operator-kit', url: KIT_REPOSITORY },
    maintainers: props.maintainers ?? [
      { name: 'cdk8s-operator-kit maintainers', email: 'maintainers@cdk8s-operator-kit.dev' },
    ],
    links: props.links ?? [{ name: 'Source', url: KIT_REPOSITORY }],
    keywords: props.keywords ?? [name, 'operator', 'cdk8s'],
    categories: props.categories ?? ['Developer Tools'],
    icon: props.icon ?? KIT_ICON,
    minKubeVersion: d(props.minKubeVersion, '1.30.0'),
    containerImage,
    examples: props.examples ?? [],
  };
}

/** The reconciler's image, as the Deployment names it. */
function reconcilerImage(objects: readonly SynthesizedObject[]): string {
  const deployment = objects.find((o) => o.kind === 'Deployment');
  const spec = deployment?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined;
  return spec?.template?.spec?.containers?.[0]?.image ?? '';
}

/** The CRDs, and the objects OLM installs as they are (not what it makes itself). */
function manifestFiles(name: string, objects: readonly SynthesizedObject[]): Record<string, string> {
  const files: Record<string, string> = {};
  for (const o of objects) {
    if (o.kind === 'CustomResourceDefinition') files[`manifests/${o.metadata.name}.yaml`] = stringify(o);
    else if (BUNDLED_KINDS.has(o.kind) && !boundToOperator(o, objects) && !webhookPart(o))
      files[`manifests/${name}-${o.metadata.name}_${o.apiVersion.replace(/\//g, '_')}_${o.kind.toLowerCase()}.yaml`] =
        stringify(withoutNamespace(o));
  }
  return files;
}

/** `metadata/annotations.yaml` and `bundle.Dockerfile`: the package, its channel, where things are. */
function metadataFiles(name: string, channel: string): Record<string, string> {
  const annotations = {
    [`${OLM_PACKAGE_ANNOTATIONS}.mediatype.v1`]: 'registry+v1',
    [`${OLM_PACKAGE_ANNOTATIONS}.manifests.v1`]: 'manifests/',
    [`${OLM_PACKAGE_ANNOTATIONS}.metadata.v1`]: 'metadata/',
    [`${OLM_PACKAGE_ANNOTATIONS}.package.v1`]: name,
    [`${OLM_PACKAGE_ANNOTATIONS}.channels.v1`]: channel,
    [`${OLM_PACKAGE_ANNOTATIONS}.channel.default.v1`]: channel,
  };
  return {
    'metadata/annotations.yaml': stringify({ annotations }),
    'bundle.Dockerfile': [
      'FROM scratch',
      ...Object.entries(annotations).map(([k, v]) => `LABEL ${k}=${v}`),
      'COPY manifests /manifests/',
      'COPY metadata /metadata/',
      '',
    ].join('\n'),
  };
}

/** Writes the bundle into `dir` (made if missing); returns the paths written. */
export function writeOlmBundle(dir: string, props: OlmBundleProps): string[] {
  return Object.entries(olmBundle(props)).map(([file, text]) => {
    const to = path.join(dir, file);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.writeFileSync(to, text);
    return to;
  });
}

/** What the construct makes, with no namespace of its own: OLM installs into the one it picks. */
function synthesize(operator: OlmBundleProps['operator']): SynthesizedObject[] {
  const app = new App({ outdir: '/dev/null' });
  const chart = new Chart(app, 'olm');
  new Operator(chart, operator.name, { ...operator, createNamespace: false });
  return chart.toJson() as SynthesizedObject[];
}

/** A role the CSV's permissions carry already (bound to the operator's ServiceAccount). */
function boundToOperator(o: SynthesizedObject, objects: readonly SynthesizedObject[]): boolean {
  if (o.kind !== 'ClusterRole' && o.kind !== 'Role') return false;
  const binding = o.kind === 'ClusterRole' ? 'ClusterRoleBinding' : 'RoleBinding';
  return objects.some(
    (b) => b.kind === binding && (b.roleRef as { name?: string } | undefined)?.name === o.metadata.name,
  );
}

/** The webhook's Service and its certificate's rights: OLM makes its own for the webhooks it serves. */
function webhookPart(o: SynthesizedObject): boolean {
  return /-webhook(-cert)?(-role)?$/.test(o.metadata.name);
}

function withoutNamespace(o: SynthesizedObject): SynthesizedObject {
  const { namespace: _namespace, ...metadata } = o.metadata;
  return { ...o, metadata };
}
