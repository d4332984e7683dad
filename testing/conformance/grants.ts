import * as os from 'node:os';
import { App, Chart } from 'cdk8s';
import { chartObjects, type ControllerDeclaration } from '../../constructs/contract';
import { CustomResourceKind, Operator, type PolicyRule } from '../../constructs';

/**
 * Every rule of the Roles and ClusterRoles the Operator construct makes for `decl` alone (its
 * /metrics served securely, its webhooks' trust kept): what the reconciler runs with in a cluster.
 */
export function grantsOf(decl: ControllerDeclaration): PolicyRule[] {
  const kind = decl.for;
  // Not a CustomResourceKind: applyCrd refused it before any check.
  if (!(kind instanceof CustomResourceKind)) return [];
  const chart = new Chart(new App({ outdir: os.tmpdir() }), 'conformance-rbac');
  new Operator(chart, 'operator', {
    controllers: [{ ...decl, for: kind as CustomResourceKind }],
    image: 'conformance',
  });
  return chartObjects(chart)
    .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
    .flatMap((o) => (Array.isArray(o.rules) ? (o.rules as PolicyRule[]) : []));
}
