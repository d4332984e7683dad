import { type Construct } from 'constructs';
import { type ControllerDeclaration, customResourceType } from '../../constructs/core/controller';
import { renderConstructs as renderInChart } from '../../constructs/core/render';
import { controllerReference } from './children';
import { type KubeObject } from './resource';

/** Renders constructs to plain objects in a throwaway chart (see constructs/core/render.ts). */
export function renderConstructs(build: (scope: Construct) => void): KubeObject[] {
  return renderInChart(build) as KubeObject[];
}

/** The children a declaration renders for a resource, with the owner reference the runtime gives. */
export function renderChildren(
  declaration: ControllerDeclaration,
  resource: KubeObject & { spec: unknown },
): KubeObject[] {
  if (!declaration.render) return [];
  return renderConstructs((scope) => {
    declaration.render!(scope, resource, { owner: controllerReference(resource, customResourceType(declaration.for)) });
  });
}
