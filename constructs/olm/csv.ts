/**
 * The ClusterServiceVersion of an operator, from what its construct synthesizes: the install
 * strategy is its Deployment and the rules its ServiceAccount is bound to, the owned CRDs are its
 * CRDs (described from their schemas), and the examples its kinds' samples. What OLM makes itself
 * (the namespace, the ServiceAccount and bindings, the webhook Service and its certificate) is
 * left to OLM; so the reconciler elects its leader in the namespace it runs in, and serves a
 * conversion webhook with the certificate OLM mounts where cert-manager's would be.
 */
import { MOUNTED_CERTIFICATE_DIR, WEBHOOK_PORT } from '../core/webhooks';
import { CONVERSION_PATH } from '../contract/webhook-paths';
import { isJsonObject } from '../contract/json';

/** An object as synthesized. */
export interface SynthesizedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

/** What the CSV says of the operator besides what its objects say. */
export interface CsvDescription {
  readonly name: string;
  readonly version: string;
  readonly displayName: string;
  readonly description: string;
  readonly provider: { readonly name: string; readonly url?: string };
  readonly maintainers: readonly { readonly name: string; readonly email: string }[];
  readonly links: readonly { readonly name: string; readonly url: string }[];
  readonly keywords: readonly string[];
  readonly categories: readonly string[];
  readonly icon?: { readonly base64data: string; readonly mediatype: string };
  readonly minKubeVersion: string;
  readonly containerImage: string;
  readonly examples: readonly object[];
}

/** The reconciler flags OLM's way of running it replaces: the namespaces and certificate are OLM's. */
const FLAGS_OLM_DECIDES = [
  '--leader-election-namespace=',
  '--namespace=',
  '--namespaces=',
  '--webhook-cert-secret=',
  '--webhook-cert-hosts=',
];

/**
 * The namespaces OLM's operator group targets, which OLM writes on the Deployment's pod template
 * (`olm.targetNamespaces`: empty for AllNamespaces, else a comma-separated list), handed to the
 * reconciler through the downward API and the kubelet's `$(VAR)` expansion of its arguments.
 */
const TARGET_NAMESPACES_ENV = {
  name: 'WATCH_NAMESPACE',
  valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } },
};

/** The ClusterServiceVersion of the operator `objects` make. */
export function clusterServiceVersion(objects: readonly SynthesizedObject[], d: CsvDescription): object {
  const deployment = only(objects, 'Deployment');
  const account = deploymentAccount(deployment);
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  const converting = crds.filter((crd) => conversionStrategy(crd) === 'Webhook');
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: `${d.name}.v${d.version}`,
      annotations: {
        'alm-examples': JSON.stringify(d.examples, null, 2),
        capabilities: 'Basic Install',
        categories: d.categories.join(', '),
        containerImage: d.containerImage,
        description: d.description,
        // Namespaced operators' option: a Role of its own for what the CSV's clusterPermissions hold.
        'operators.operatorframework.io/builder': 'cdk8s-operator-kit',
      },
    },
    spec: {
      displayName: d.displayName,
      description: d.description,
      version: d.version,
      minKubeVersion: d.minKubeVersion,
      maturity: 'alpha',
      provider: d.provider,
      maintainers: d.maintainers,
      links: d.links,
      keywords: d.keywords,
      ...(d.icon ? { icon: [d.icon] } : {}),
      // Each tested as OLM runs it (docs/olm.md): the reconciler watches the namespaces OLM targets.
      installModes: ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'].map((type) => ({
        type,
        supported: type === 'AllNamespaces' || converting.length === 0,
      })),
      customresourcedefinitions: { owned: crds.flatMap(ownedCrd) },
      install: {
        strategy: 'deployment',
        spec: {
          clusterPermissions: permissions(objects, account, 'ClusterRoleBinding'),
          permissions: permissions(objects, account, 'RoleBinding'),
          deployments: [
            { name: deployment.metadata.name, label: labelsOf(deployment), spec: deploymentSpecForOlm(deployment) },
          ],
        },
      },
      ...(converting.length ? { webhookdefinitions: [conversionWebhook(deployment, converting)] } : {}),
    },
  };
}

function only(objects: readonly SynthesizedObject[], kind: string): SynthesizedObject {
  const found = objects.filter((o) => o.kind === kind);
  const [first] = found;
  if (!first || found.length > 1)
    throw new Error(`an operator's bundle needs exactly one ${kind}, got ${found.length}`);
  return first;
}

function deploymentAccount(deployment: SynthesizedObject): string {
  const template = field(deployment, 'spec', 'template', 'spec');
  const name = isJsonObject(template) ? template.serviceAccountName : undefined;
  if (typeof name !== 'string') throw new Error(`Deployment ${deployment.metadata.name} names no ServiceAccount`);
  return name;
}

function field(o: unknown, ...path: string[]): unknown {
  return path.reduce<unknown>((at, key) => (isJsonObject(at) ? at[key] : undefined), o);
}

function labelsOf(o: SynthesizedObject): Record<string, string> {
  const labels = o.metadata.labels;
  return isJsonObject(labels)
    ? Object.fromEntries(Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string'))
    : {};
}

/** The rules of the roles `binding` kind binds to the ServiceAccount: clusterPermissions or permissions. */
function permissions(
  objects: readonly SynthesizedObject[],
  account: string,
  binding: 'ClusterRoleBinding' | 'RoleBinding',
): object[] {
  const roleKind = binding === 'ClusterRoleBinding' ? 'ClusterRole' : 'Role';
  const rules = objects
    .filter((o) => o.kind === binding)
    .filter((b) =>
      asArray(b.subjects).some((s) => isJsonObject(s) && s.kind === 'ServiceAccount' && s.name === account),
    )
    .flatMap((b) => {
      const ref = b.roleRef;
      const role = objects.find((o) => o.kind === roleKind && isJsonObject(ref) && o.metadata.name === ref.name);
      return role ? asArray(role.rules) : [];
    });
  return rules.length ? [{ serviceAccountName: account, rules }] : [];
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The Deployment's spec as OLM runs it: in the namespace OLM picks, with OLM's certificate. */
function deploymentSpecForOlm(deployment: SynthesizedObject): unknown {
  const spec = structuredClone(deployment.spec);
  const pod = field(spec, 'template', 'spec');
  for (const container of isJsonObject(pod) ? asArray(pod.containers) : []) {
    if (!isJsonObject(container) || !Array.isArray(container.args)) continue;
    const args = container.args.filter(
      (a: unknown) => !(typeof a === 'string' && FLAGS_OLM_DECIDES.some((f) => a.startsWith(f))),
    );
    // OLM mounts the webhook's certificate (tls.crt, tls.key) where cert-manager's would be.
    if (args.some((a: unknown) => typeof a === 'string' && a.startsWith('--webhook-bind-address=')))
      args.push(`--webhook-cert-path=${MOUNTED_CERTIFICATE_DIR}`);
    // The namespaces OLM targets: none (every namespace) for AllNamespaces.
    args.push(`--namespaces=$(${TARGET_NAMESPACES_ENV.name})`);
    container.args = args;
    container.env = [...asArray(container.env), TARGET_NAMESPACES_ENV];
  }
  return spec;
}

function conversionStrategy(crd: SynthesizedObject): unknown {
  return field(crd, 'spec', 'conversion', 'strategy');
}

/** The conversion webhook OLM serves the CRDs through: its Service and certificate are OLM's. */
function conversionWebhook(deployment: SynthesizedObject, crds: readonly SynthesizedObject[]): object {
  return {
    type: 'ConversionWebhook',
    generateName: `c${deployment.metadata.name}.kb.io`,
    deploymentName: deployment.metadata.name,
    containerPort: 443,
    targetPort: WEBHOOK_PORT,
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    webhookPath: CONVERSION_PATH,
    conversionCRDs: crds.map((crd) => crd.metadata.name),
  };
}

/** One owned CRD entry per served version, described from its schema. */
function ownedCrd(crd: SynthesizedObject): object[] {
  const kind = field(crd, 'spec', 'names', 'kind');
  return asArray(field(crd, 'spec', 'versions')).flatMap((v) => {
    if (!isJsonObject(v) || v.served !== true || typeof v.name !== 'string') return [];
    const schema = field(v, 'schema', 'openAPIV3Schema');
    const description = field(schema, 'description');
    return [
      {
        name: crd.metadata.name,
        version: v.name,
        kind,
        displayName: typeof kind === 'string' ? kind : crd.metadata.name,
        description: typeof description === 'string' ? description : `${String(kind)} resources`,
        specDescriptors: descriptors(field(schema, 'properties', 'spec', 'properties')),
        statusDescriptors: statusDescriptors(field(schema, 'properties', 'status', 'properties')),
      },
    ];
  });
}

/** A descriptor per top-level field: its path, a display name from it, its schema description. */
function descriptors(properties: unknown): object[] {
  if (!isJsonObject(properties)) return [];
  return Object.entries(properties).map(([path, schema]) => ({
    path,
    displayName: displayName(path),
    ...(typeof field(schema, 'description') === 'string' ? { description: field(schema, 'description') } : {}),
  }));
}

function statusDescriptors(properties: unknown): object[] {
  return descriptors(properties).map((d) =>
    (d as { path: string }).path === 'conditions'
      ? { ...d, 'x-descriptors': ['urn:alm:descriptor:io.kubernetes.conditions'] }
      : d,
  );
}

/** `storageClassName` → `Storage Class Name`. */
function displayName(path: string): string {
  const words = path.replace(/([a-z0-9])([A-Z])/g, '$1 $2');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
