/**
 * The chart's values: each one an `OperatorOptions` setting, with its default (taken from the
 * operator's own props), how it changes the props, and a different legal value used to find
 * where the construct puts it.
 */
import { DEFAULT_IMAGE, DEFAULT_IMAGE_TAG } from '../core/kit-image';
import { parseImageReference } from '../core/image-reference';
import type { OperatorProps } from '../core/operator-props';
import { isJsonObject } from '../contract/json';

/** A value that only changes text (a string, a number) or one whole block (`resources`), of type `V`. */
interface TypedScalar<V> {
  /** Where it is in values.yaml, e.g. `image.tag`. */
  readonly path: string;
  /** The Helm expression of it, e.g. `.Values.image.tag`. */
  readonly expr: string;
  readonly type: 'string' | 'number' | 'block';
  /** Its value in props. */
  readonly read: (props: OperatorProps) => V | undefined;
  /** Props with it set. */
  readonly write: (props: OperatorProps, value: V) => OperatorProps;
  /** Another legal value, different from `value`, to locate it in what the construct makes. */
  readonly alternative: (value: V | undefined, props: OperatorProps) => V;
  /** Whether it shows in the operator these props make (the watched namespace only when there is one). */
  readonly appliesTo?: (props: OperatorProps) => boolean;
  /** Not written to values.yaml: the release namespace, and the one watched namespace the chart is probed with. */
  readonly builtIn?: boolean;
  /** What it does, for values.yaml and values.schema.json. */
  readonly doc?: string;
  /** Its JSON schema in values.schema.json: what the construct would accept. */
  readonly schema?: Record<string, unknown>;
}

/** A scalar value, whatever its type: its value in props, and props with another legal value. */
export interface ScalarValue extends Omit<TypedScalar<unknown>, 'write' | 'alternative'> {
  /** Its value in props, another legal value, and props with that other value set. */
  readonly probe: (props: OperatorProps) => { value: unknown; other: unknown; props: OperatorProps };
}

/** Declares a scalar value with its type, which only its own read, write and alternative share. */
function scalar<V>(value: TypedScalar<V>): ScalarValue {
  const { write, alternative, ...rest } = value;
  return {
    ...rest,
    probe: (props) => {
      const current = value.read(props);
      const other = alternative(current, props);
      return { value: current, other, props: write(props, other) };
    },
  };
}

/** A value that adds or removes objects and fields: a condition of the templates. */
export interface SwitchValue {
  readonly path: string;
  readonly expr: string;
  /** Whether it is on in props. */
  readonly read: (props: OperatorProps) => boolean;
  readonly write: (props: OperatorProps, on: boolean) => OperatorProps;
  readonly doc: string;
}

/** What the chart's `watchNamespaces` value does. */
export const WATCH_NAMESPACES_DOC =
  'Watch only these namespaces: a Role and RoleBinding in each instead of a ClusterRole, and the reconciler lists and watches each apart. Empty watches every namespace.';

/** The watched namespace the variants with one use, when the operator has none by default. */
const SOME_WATCHED_NAMESPACE = 'watched';

const otherString = <S extends string>(value: S | undefined, a: S, b: S): S => (value === a ? b : a);
const RESOURCE_ALTERNATIVES = ['1001m', '1001Mi', '1002m', '1002Mi'];

type PullPolicy = NonNullable<OperatorProps['imagePullPolicy']>;
type LogLevel = NonNullable<OperatorProps['logLevel']>;
type Resources = ReturnType<typeof resourcesValue>;

/** The reconciler's resources in the shape of a container's `resources` (what `toYaml` writes back). */
export function resourcesValue(props: OperatorProps) {
  const r = props.resources ?? {};
  return {
    requests: { cpu: r.cpuRequest ?? '10m', memory: r.memoryRequest ?? '64Mi' },
    limits: { cpu: r.cpuLimit ?? '500m', memory: r.memoryLimit ?? '256Mi' },
  };
}

/** The structural values: leader election, secure metrics, and whether one namespace is watched. */
export const SWITCHES: readonly SwitchValue[] = [
  {
    path: 'leaderElection.enabled',
    doc: 'Elect one active reconciler through a Lease; more than one replica needs it.',
    expr: '.Values.leaderElection.enabled',
    read: (p) => p.leaderElection ?? true,
    // Without it, one replica (as the construct requires, and the values schema), not sharded.
    write: (p, on) => ({ ...p, leaderElection: on, ...(on ? {} : { replicas: 1, shards: undefined }) }),
  },
  {
    path: 'metrics.secure',
    doc: 'Serve /metrics over HTTPS to callers allowed `get` on it (bind the metrics-reader ClusterRole to your Prometheus); false serves plain HTTP to anyone.',
    expr: '.Values.metrics.secure',
    read: (p) => p.metricsSecure ?? true,
    write: (p, on) => ({ ...p, metricsSecure: on }),
  },
  {
    path: 'monitoring.enabled',
    doc: 'A ServiceMonitor, a PrometheusRule of alerts and a Grafana dashboard ConfigMap (needs the Prometheus Operator CRDs).',
    expr: '.Values.monitoring.enabled',
    read: (p) => Boolean(p.monitoring),
    // On keeps the construct's own monitoring options, if it has them.
    write: (p, on) => ({ ...p, monitoring: on ? (typeof p.monitoring === 'object' ? p.monitoring : true) : false }),
  },
  {
    // Probed with one namespace; the chart offers the list (see watched-namespaces.ts).
    path: 'watchNamespace',
    doc: WATCH_NAMESPACES_DOC,
    expr: '.Values.watchNamespace',
    read: (p) => p.watchNamespace !== undefined,
    write: (p, on) => ({ ...p, watchNamespace: on ? (p.watchNamespace ?? SOME_WATCHED_NAMESPACE) : undefined }),
  },
];

/** The values that change text. */
export const SCALARS: readonly ScalarValue[] = [
  scalar<string>({
    // Helm's convention: namespaced objects go to the namespace the release is installed in.
    path: 'namespace',
    expr: '.Release.Namespace',
    type: 'string',
    builtIn: true,
    read: (p) => p.namespace,
    write: (p, v) => ({ ...p, namespace: v }),
    alternative: (v) => otherString(v, 'helm-probe-namespace', 'helm-probe-namespace-b'),
  }),
  scalar<string>({
    path: 'image.repository',
    doc: 'The reconciler image, without its tag.',
    schema: { type: 'string', minLength: 1 },
    expr: '.Values.image.repository',
    type: 'string',
    read: (p) => p.image,
    write: (p, v) => ({ ...p, image: v }),
    alternative: (v) => otherString(v, 'helm-probe/reconciler', 'helm-probe/reconciler-b'),
  }),
  scalar<string>({
    path: 'image.tag',
    doc: 'The reconciler image tag.',
    schema: { type: 'string', pattern: '^[\\w][\\w.-]{0,127}$' },
    expr: '.Values.image.tag',
    type: 'string',
    read: (p) => p.imageTag,
    write: (p, v) => ({ ...p, imageTag: v }),
    alternative: (v) => otherString(v, 'helm-probe-tag', 'helm-probe-tag-b'),
  }),
  scalar<PullPolicy>({
    path: 'image.pullPolicy',
    doc: 'When the kubelet pulls the image.',
    schema: { enum: ['Always', 'IfNotPresent', 'Never'] },
    expr: '.Values.image.pullPolicy',
    type: 'string',
    read: (p) => p.imagePullPolicy ?? 'IfNotPresent',
    write: (p, v) => ({ ...p, imagePullPolicy: v }),
    alternative: (v) => otherString(v, 'Always', 'Never'),
  }),
  scalar<number>({
    // More than one replica needs leader election (the construct refuses it otherwise; so does
    // the chart's values schema).
    path: 'replicaCount',
    doc: 'Reconciler pods; more than one needs leader election (one reconciles, the others stand by).',
    schema: { type: 'integer', minimum: 1 },
    expr: '.Values.replicaCount',
    type: 'number',
    read: (p) => p.replicas ?? p.shards ?? 1,
    write: (p, v) => ({ ...p, replicas: v }),
    // Never fewer than the shards: the construct refuses a range with no pod.
    alternative: (v, p) => {
      const fewest = Math.max(2, p.shards ?? 1);
      return v === fewest ? fewest + 1 : fewest;
    },
    appliesTo: (p) => p.leaderElection ?? true,
  }),
  scalar<Resources>({
    path: 'resources',
    doc: 'Compute resources of the reconciler container.',
    schema: { type: 'object' },
    expr: '.Values.resources',
    type: 'block',
    read: resourcesValue,
    write: (p, r) => {
      return {
        ...p,
        resources: {
          cpuRequest: r.requests.cpu,
          memoryRequest: r.requests.memory,
          cpuLimit: r.limits.cpu,
          memoryLimit: r.limits.memory,
        },
      };
    },
    alternative: (r) => {
      const current = r ? [r.requests.cpu, r.requests.memory, r.limits.cpu, r.limits.memory] : [];
      const [a = '', b = '', c = '', d = ''] = RESOURCE_ALTERNATIVES.map((q, i) =>
        current[i] === q ? `${q.slice(0, -1)}7` : q,
      );
      return { requests: { cpu: a, memory: b }, limits: { cpu: c, memory: d } };
    },
  }),
  scalar<string>({
    // Probed with one namespace; the chart offers the list (see watched-namespaces.ts).
    path: 'watchNamespace',
    builtIn: true,
    expr: '.Values.watchNamespace',
    type: 'string',
    read: (p) => p.watchNamespace,
    write: (p, v) => ({ ...p, watchNamespace: v }),
    alternative: (v) => otherString(v, 'helm-probe-watched', 'helm-probe-watched-b'),
    appliesTo: (p) => p.watchNamespace !== undefined,
  }),
  scalar<LogLevel>({
    path: 'logLevel',
    doc: 'debug, info, warn or error.',
    schema: { enum: ['debug', 'info', 'warn', 'error'] },
    expr: '.Values.logLevel',
    type: 'string',
    read: (p) => p.logLevel ?? 'info',
    write: (p, v) => ({ ...p, logLevel: v }),
    alternative: (v) => otherString(v, 'debug', 'warn'),
  }),
  scalar<number>({
    path: 'maxConcurrentReconciles',
    doc: 'Reconciles that may run at once per controller (different objects only).',
    schema: { type: 'integer', minimum: 1, maximum: 100 },
    expr: '.Values.maxConcurrentReconciles',
    type: 'number',
    read: (p) => p.maxConcurrentReconciles ?? 4,
    write: (p, v) => ({ ...p, maxConcurrentReconciles: v }),
    alternative: (v) => (v === 17 ? 18 : 17),
  }),
  scalar<number>({
    path: 'metrics.port',
    doc: 'Port of /metrics (the reconciler runs as non-root: 1024 or above).',
    schema: { type: 'integer', minimum: 1024, maximum: 65535 },
    expr: '.Values.metrics.port',
    type: 'number',
    read: (p) => p.metricsPort ?? 8080,
    write: (p, v) => ({ ...p, metricsPort: v }),
    // Three candidates, at most two of them taken (the current port and the health port).
    alternative: (v, p) => [48_123, 48_124].find((port) => port !== v && port !== (p.healthPort ?? 8081)) ?? 48_125,
  }),
];

/**
 * The operator's props as the chart starts from them: every scalar value spelled out (so that
 * values.yaml holds it), the image split into repository and tag, and no namespace of its own
 * (Helm's release namespace holds the namespaced objects, and `helm install --create-namespace`
 * makes it).
 */
export function chartProps(props: OperatorProps): OperatorProps {
  const name = props.name;
  const where = `Helm chart of operator ${JSON.stringify(name ?? '')}`;
  const image = parseImageReference(props.image ?? DEFAULT_IMAGE);
  if (image.digest) throw new Error(`${where}: the image names a digest; give the image and a tag (imageTag) instead`);
  const repository = image.registry ? `${image.registry}/${image.repository}` : image.repository;
  // Where the construct was placed does not matter to a chart: it makes its objects on its own.
  const { clusterScope: _cluster, crdScope: _crds, watchNamespaces: _watched, ...settings } = props;
  return {
    ...settings,
    image: repository,
    imageTag: image.tag ?? props.imageTag ?? DEFAULT_IMAGE_TAG,
    createNamespace: false,
    namespace: props.namespace ?? `${name}-system`,
    // The chart is probed with one watched namespace; its value is the list (watchedNamespaces).
    watchNamespace: watchedNamespaces(props)[0],
  };
}

/** The namespaces an operator watches (its `watchNamespace` or `watchNamespaces`); none: every one. */
export function watchedNamespaces(props: OperatorProps): readonly string[] {
  return props.watchNamespaces ?? (props.watchNamespace === undefined ? [] : [props.watchNamespace]);
}

/** A value's path as the keys of the maps holding it and its own key: `metrics.port` → [metrics], port. */
export function splitPath(path: string): { parents: string[]; key: string } {
  const keys = path.split('.');
  return { parents: keys.slice(0, -1), key: keys.slice(-1).join('') };
}

/** values.yaml's content: each value's default, by its path (`watched`: the watchNamespaces list). */
export function defaultValues(props: OperatorProps, watched: readonly string[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  const set = (path: string, value: unknown) => {
    const { parents, key } = splitPath(path);
    let at = values;
    for (const k of parents) {
      const inner = isJsonObject(at[k]) ? at[k] : {};
      at[k] = inner;
      at = inner;
    }
    at[key] = value;
  };
  for (const v of SCALARS) if (!v.builtIn) set(v.path, v.read(props) ?? '');
  for (const s of SWITCHES) if (s.path !== 'watchNamespace') set(s.path, s.read(props));
  set('watchNamespaces', [...watched]);
  return values;
}
