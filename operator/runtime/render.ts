import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { ControllerDeclaration, customResourceType } from '../../constructs/core/controller';
import { controllerReference } from './children';
import { KubeObject } from './resource';

/**
 * Renders constructs to plain objects in a throwaway chart: how a reconciler turns the same
 * cdk8s constructs used at synth time into the live children it applies.
 */
export function renderConstructs(build: (scope: Construct) => void): KubeObject[] {
  const app = new App({ outdir: '/dev/null' });
  const chart = new Chart(app, 'render');
  build(chart);
  return chart.toJson() as KubeObject[];
}

/** The children a declaration renders for a resource, with the owner reference the runtime gives. */
export function renderChildren(declaration: ControllerDeclaration, resource: KubeObject & { spec: unknown }): KubeObject[] {
  if (!declaration.render) return [];
  return renderConstructs(scope => declaration.render!(scope, resource, { owner: controllerReference(resource, customResourceType(declaration.for)) }));
}
