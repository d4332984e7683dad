/** The product name, stamped as `app.kubernetes.io/part-of` on everything the kit makes. */
export const PART_OF = 'cdk8s-operator-kit';

/** The recommended `app.kubernetes.io/*` labels. */
export interface StandardLabelsProps {
  /** The application's name, e.g. `memcached`. */
  readonly name: string;
  /** This instance's unique name, e.g. the custom resource's name. */
  readonly instance: string;
  /** Its role within the application, e.g. `controller`, `cache`. */
  readonly component: string;
  /** Who manages it: `cdk8s` for synthesized YAML, the operator for live children. */
  readonly managedBy: string;
  /** @default 'cdk8s-operator-kit' */
  readonly partOf?: string;
}

export function standardLabels(p: StandardLabelsProps): Record<string, string> {
  return {
    'app.kubernetes.io/name': p.name,
    'app.kubernetes.io/instance': p.instance,
    'app.kubernetes.io/component': p.component,
    'app.kubernetes.io/part-of': p.partOf ?? PART_OF,
    'app.kubernetes.io/managed-by': p.managedBy,
  };
}

/** The labels a selector may match on: stable for an object's whole life (never the version). */
export function selectorLabels(p: StandardLabelsProps): Record<string, string> {
  const all = standardLabels(p);
  const stable = ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/component'];
  return Object.fromEntries(Object.entries(all).filter(([key]) => stable.includes(key)));
}
