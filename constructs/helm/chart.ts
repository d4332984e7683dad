/**
 * A Helm chart of an operator, templated from the `Operator` construct itself: each template is
 * what the construct makes, with the values put where the construct puts the settings they stand
 * for, and conditions where a setting adds or removes objects and fields. Nothing is written twice:
 * change the construct and the chart follows.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import { Document, stringify } from 'yaml';
import { DNS_LABEL } from '../core/formats';
import { Operator } from '../core/operator';
import type { OperatorProps } from '../core/operator-props';
import { emitObject } from './emit';
import {
  applyValues,
  Conditions,
  locateValue,
  mergeVariants,
  type TemplateNode,
  type ValuePlaces,
  type Variant,
} from './template-tree';
import {
  chartProps,
  defaultValues,
  SCALARS,
  splitPath,
  SWITCHES,
  WATCH_NAMESPACES_DOC,
  watchedNamespaces,
} from './values';
import { onWatchedList, WATCHED_LIST, WATCHED_RANGE, watchedNamespacesTemplate } from './watched-namespaces';

export interface OperatorHelmChartProps {
  /**
   * The operator (a construct already made, or its props with a name): its controllers and
   * settings. The settings become the defaults of the chart's values; its namespaced objects go
   * to the release's namespace (`helm install -n`).
   */
  readonly operator: Operator | (OperatorProps & { readonly name: string });
  /** The chart's name. @default the operator's: its name, with `-operator` added unless it ends so */
  readonly chartName?: string;
  /** The chart's version (SemVer). @default '0.1.0' */
  readonly version?: string;
  /** The version of what it installs. @default the image tag */
  readonly appVersion?: string;
  /** @default 'The <name> operator: its CRDs, RBAC and reconciler, made with cdk8s-operator-kit.' */
  readonly description?: string;
  /**
   * Write the CRDs to the chart's `crds/` directory, which Helm installs before it renders
   * anything else: then one release can carry the operator and resources of its kinds too (the
   * `customResources` value). Helm never upgrades or deletes what is in `crds/`, so a new CRD version is
   * applied another way (`kubectl apply -f dist/`), and `crds.install` is not a value then (Helm's
   * `--skip-crds` is). Not for kinds whose conversion calls a webhook: its Service's namespace is the
   * release's, which only a template can say.
   * @default false: the CRDs are templates, installed and upgraded with the release when `crds.install`
   */
  readonly crdsDirectory?: boolean;
}

type Json = Parameters<typeof locateValue>[0];
type KubeJson = { kind: string; metadata: { name: string; annotations?: Record<string, string> } } & Record<
  string,
  Json
>;

/** The default chart name of an operator: its name, with `-operator` added unless it ends so. */
export function chartNameOf(operatorName: string): string {
  return operatorName.endsWith('-operator') ? operatorName : `${operatorName}-operator`;
}

/** The chart's files, by path inside the chart directory. */
export function operatorHelmChart(props: OperatorHelmChartProps): Record<string, string> {
  const given =
    props.operator instanceof Operator
      ? { ...props.operator.props, name: props.operator.operatorName }
      : props.operator;
  const base = chartProps(given);
  const name = base.name ?? '';
  const chartName = props.chartName ?? chartNameOf(name);
  const files: Record<string, string> = {};
  files['Chart.yaml'] = stringify(
    {
      apiVersion: 'v2',
      name: chartName,
      description:
        props.description ?? `The ${name} operator: its CRDs, RBAC and reconciler, made with cdk8s-operator-kit.`,
      type: 'application',
      version: props.version ?? '0.1.0',
      appVersion: props.appVersion ?? base.imageTag,
    },
    { lineWidth: 0 },
  );
  const crdsDirectory = props.crdsDirectory ?? false;
  files['values.yaml'] = valuesYaml(base, watchedNamespaces(given), crdsDirectory);
  files['values.schema.json'] = `${JSON.stringify(valuesSchema(base.shards ?? 1, crdsDirectory), null, 2)}\n`;
  // The labels of the user's chart are on everything the operator makes there: on the chart's too.
  const labels = props.operator instanceof Operator ? Chart.of(props.operator).labels : {};
  const { crds, templates } = templateObjects(base, (p) => synthesize(p, labels));
  for (const t of templates)
    if (!(crdsDirectory && t.file.startsWith(CRD_FILE_PREFIX))) files[`templates/${t.file}`] = t.text;
  if (crdsDirectory) for (const crd of crds) files[`crds/${crd.metadata.name}.yaml`] = crdInDirectory(crd);
  files['templates/custom-resources.yaml'] = RESOURCES_TEMPLATE;
  files['templates/NOTES.txt'] = notes(name, crds);
  return files;
}

/** The `customResources` value, each object as given: in the release's namespace unless it names one. */
const RESOURCES_TEMPLATE = `{{- range .Values.customResources }}
---
{{ toYaml . }}
{{- end }}
`;

const RESOURCES_DOC =
  "Resources the release applies too, as given: e.g. a resource of the operator's kind. In the release with the CRDs only when the chart was written with crdsDirectory (Helm installs crds/ first); otherwise the CRDs must be in the cluster already (another release, kubectl apply -f dist/).";

/** A CRD as `crds/` holds it: plain YAML, which Helm does not template. */
function crdInDirectory(crd: KubeJson): string {
  const conversion = (crd.spec as { conversion?: { strategy?: string } } | undefined)?.conversion;
  if (conversion?.strategy === 'Webhook')
    throw new Error(
      `CRD ${crd.metadata.name} converts through a webhook whose Service is in the release's namespace, which crds/ cannot say (Helm does not template it): leave crdsDirectory off for this operator`,
    );
  return stringify(crd, { lineWidth: 0 });
}

/** Writes the chart into `dir` (its previous content replaced); returns the files written. */
export function writeHelmChart(dir: string, props: OperatorHelmChartProps): string[] {
  const files = operatorHelmChart(props);
  fs.rmSync(dir, { recursive: true, force: true });
  return Object.entries(files).map(([file, text]) => {
    const target = path.join(dir, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text);
    return target;
  });
}

/** What the construct makes with these props: its CRDs apart from the rest. */
type Synthesis = (props: OperatorProps) => { crds: KubeJson[]; objects: Map<string, KubeJson> };

function synthesize(props: OperatorProps, labels: Record<string, string>): ReturnType<Synthesis> {
  const app = new App({ outdir: '/dev/null' });
  const chart = new Chart(app, 'helm', { labels });
  new Operator(chart, props.name ?? 'operator', props);
  const all = (chart.toJson() as KubeJson[]).map((o) => (o.kind === 'CustomResourceDefinition' ? kept(o) : o));
  const objects = new Map<string, KubeJson>();
  for (const o of all) objects.set(`${o.kind}/${o.metadata.name}`, o);
  return { crds: all.filter((o) => o.kind === 'CustomResourceDefinition'), objects };
}

/**
 * A CRD as the chart installs it: a template (not `crds/`, which Helm never templates), so the
 * Service its conversion calls follows the release namespace; kept by `helm uninstall` (and by
 * an upgrade that drops it), since deleting a CRD deletes every resource of its kind.
 */
function kept(crd: KubeJson): KubeJson {
  const metadata = crd.metadata;
  return { ...crd, metadata: { ...metadata, annotations: { ...metadata.annotations, [KEEP_POLICY]: 'keep' } } };
}

const KEEP_POLICY = 'helm.sh/resource-policy';
/** How a CRD's template file is named: `crd-<name>.yaml`. */
const CRD_FILE_PREFIX = 'crd-';

/** Where a template is written, and the value that must be on for it to be installed. */
function templateFile(key: string): { file: string; requires?: string } {
  const [kind = '', name = ''] = key.split('/');
  if (kind === 'CustomResourceDefinition')
    return { file: `${CRD_FILE_PREFIX}${name}.yaml`, requires: '.Values.crds.install' };
  return { file: `${key.replace('/', '-').toLowerCase()}.yaml` };
}

/**
 * The templates: the construct's objects in every combination of switches, each with its values
 * located by setting them to another value, merged into one template per object.
 */
function templateObjects(
  base: OperatorProps,
  make: Synthesis,
): {
  crds: KubeJson[];
  templates: { file: string; text: string }[];
} {
  const conditions = new Conditions(SWITCHES.map((s) => s.expr));
  const variants: Variant[] = Array.from({ length: 2 ** SWITCHES.length }, (_, n) =>
    SWITCHES.map((_s, i) => (n & (1 << i)) !== 0),
  );
  const versions = new Map<string, Map<Variant, TemplateNode>>();
  for (const variant of variants) {
    const props = SWITCHES.reduce((p, s, i) => s.write(p, variant[i] === true), base);
    for (const [key, tree] of templatedObjects(props, `variant ${describe(variant)}`, make)) {
      const byVariant = versions.get(key) ?? new Map<Variant, TemplateNode>();
      versions.set(key, byVariant.set(variant, tree));
    }
  }
  const all = new Set(variants);
  const templates = [...versions].map(([key, byVariant]) => {
    const when = conditions.when(new Set(byVariant.keys()), all);
    const { file, requires } = templateFile(key);
    const condition = requires && when ? `and ${requires} (${when})` : (requires ?? when);
    const { node, perNamespace } = watchedNamespacesTemplate(mergeVariants(byVariant, conditions), key);
    return {
      file,
      text: emitObject(node, condition && onWatchedList(condition), perNamespace ? WATCHED_RANGE : undefined),
    };
  });
  return { crds: make(base).crds, templates };
}

/** One variant's objects as trees with its values located in them. */
function templatedObjects(props: OperatorProps, where: string, make: Synthesis): Map<string, TemplateNode> {
  const { objects } = make(props);
  const places = new Map<string, ValuePlaces[]>();
  for (const value of SCALARS.filter((s) => s.appliesTo?.(props) ?? true)) {
    const { value: current, other, props: withOther } = value.probe(props);
    const changed = make(withOther).objects;
    const probe = { expr: value.expr, type: value.type, value: current, other };
    let found = false;
    for (const [key, object] of objects) {
      const after = changed.get(key);
      if (!after) throw new Error(`${where}: setting ${value.expr} removes ${key}, which a value cannot express`);
      const located = locateValue(object, after, probe, `${where}, ${key}`);
      if (located.spans.size || located.blocks.size) found = true;
      places.set(key, [...(places.get(key) ?? []), located]);
    }
    if (changed.size !== objects.size) throw new Error(`${where}: setting ${value.expr} adds objects`);
    if (!found) throw new Error(`${where}: ${value.expr} changes nothing the operator makes`);
  }
  return new Map([...objects].map(([key, object]) => [key, applyValues(object, places.get(key) ?? [])]));
}

function describe(variant: Variant): string {
  return SWITCHES.map((s, i) => `${s.path}=${String(variant[i])}`).join(', ');
}

const CRDS_INSTALL_DOC =
  'Install (and upgrade) the CRDs with the release; they are kept when it is uninstalled. false: they are installed another way (kubectl apply -f dist/, a pipeline).';

/** values.yaml: each value with what it does. */
function valuesYaml(props: OperatorProps, watched: readonly string[], crdsDirectory: boolean): string {
  const values = {
    ...defaultValues(props, watched),
    ...(crdsDirectory ? {} : { crds: { install: true } }),
    customResources: [],
  };
  const docs = new Map<string, string>([
    ...(crdsDirectory ? [] : [['crds.install', CRDS_INSTALL_DOC] as const]),
    ['watchNamespaces', WATCH_NAMESPACES_DOC],
    ['customResources', RESOURCES_DOC],
  ]);
  for (const v of [...SCALARS, ...SWITCHES]) if (v.doc && v.path !== 'watchNamespace') docs.set(v.path, v.doc);
  const doc = new Document(values);
  for (const [p, text] of docs) {
    const { parents, key } = splitPath(p);
    const parent = parents.length > 0 ? doc.getIn(parents, true) : doc.contents;
    const pair = (parent as { items?: { key: { value: string; commentBefore?: string } }[] } | null)?.items?.find(
      (i) => i.key.value === key,
    );
    if (pair) pair.key.commentBefore = ` ${text}`;
  }
  return `# Defaults of the ${props.name} operator's chart; each is a setting of its Operator construct.\n${doc.toString({ lineWidth: 0 })}`;
}

/** A node of values.schema.json: JSON Schema keywords, with the properties of an object as nodes. */
interface SchemaNode {
  [keyword: string]: unknown;
  properties?: Record<string, SchemaNode>;
}

/** values.schema.json: the values the construct accepts; Helm refuses others before rendering. */
function valuesSchema(shards: number, crdsDirectory: boolean): SchemaNode {
  const root: SchemaNode = {
    $schema: 'https://json-schema.org/draft-07/schema#',
    type: 'object',
    additionalProperties: false,
    properties: { global: { type: 'object' } },
  };
  const put = (p: string, schema: Record<string, unknown>) => {
    const { parents, key } = splitPath(p);
    let at = root;
    for (const k of parents)
      at = (at.properties ??= {})[k] ??= { type: 'object', additionalProperties: false, properties: {} };
    (at.properties ??= {})[key] = schema;
  };
  for (const v of SCALARS) {
    if (v.builtIn) continue;
    put(v.path, { ...(v.doc ? { description: v.doc } : {}), ...(v.schema ?? {}) });
  }
  for (const s of SWITCHES) if (s.path !== 'watchNamespace') put(s.path, { description: s.doc, type: 'boolean' });
  put('watchNamespaces', {
    description: WATCH_NAMESPACES_DOC,
    type: 'array',
    uniqueItems: true,
    items: { type: 'string', pattern: `^${DNS_LABEL}$` },
  });
  if (!crdsDirectory) put('crds.install', { description: CRDS_INSTALL_DOC, type: 'boolean' });
  put('customResources', {
    description: RESOURCES_DOC,
    type: 'array',
    items: { type: 'object', required: ['apiVersion', 'kind', 'metadata'] },
  });
  // More than one replica needs leader election, as the construct says.
  root.if = { properties: { leaderElection: { properties: { enabled: { const: false } } } } };
  root.then = { properties: { replicaCount: { maximum: 1 } } };
  // With it, a sharded operator needs a pod per shard (the rest stand by), as the construct says.
  if (shards > 1) root.else = { properties: { replicaCount: { minimum: shards } } };
  return root;
}

function notes(name: string, crds: readonly KubeJson[]): string {
  const kinds = crds.map((c) => (c.spec as { names: { kind: string; plural: string } }).names);
  return [
    `The ${name} operator is installed in namespace {{ .Release.Namespace }}, watching {{ if ${WATCHED_LIST} }}namespaces {{ join ", " ${WATCHED_LIST} }}{{ else }}every namespace{{ end }}.`,
    '',
    `Its kinds: ${kinds.map((k) => `${k.kind} (kubectl get ${k.plural} -A)`).join(', ')}.`,
    `Its reconciler: kubectl -n {{ .Release.Namespace }} logs deployment/${name}-operator`,
    '',
  ].join('\n');
}
