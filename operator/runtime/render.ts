import type { KubeObject } from '../../constructs/contract';
import { type Construct } from 'constructs';
import { type ControllerDeclaration, type CustomResourceObject, customResourceType } from '../../constructs/contract';
import {
  renderConstructs as renderInChart,
  type RenderedChildren,
  renderWithWaits as renderWithWaitsInChart,
  resourceAddress,
} from '../../constructs/contract/render';
import { controllerReference } from './children';

/** Renders constructs to plain objects in a throwaway chart (see constructs/core/render.ts). */
export function renderConstructs(build: (scope: Construct) => void): KubeObject[] {
  return renderInChart(build);
}

/** Rendered children with the waits between them (see `waitsFor`), at a construct address (see `resourceAddress`). */
export function renderWithWaits(build: (scope: Construct) => void, address?: string): RenderedChildren {
  return renderWithWaitsInChart(build, address);
}

export { resourceAddress };

export type { RenderedChildren };

/** The children a declaration renders for a resource, with the owner reference the runtime gives. */
export function renderChildren(declaration: ControllerDeclaration, resource: CustomResourceObject): KubeObject[] {
  return renderChildrenWithWaits(declaration, resource).objects;
}

/** `renderChildren`, with the waits between the children (see `waitsFor`). */
export function renderChildrenWithWaits(
  declaration: ControllerDeclaration,
  resource: CustomResourceObject,
): RenderedChildren {
  if (!declaration.render) return { objects: [], waits: new Map() };
  return renderWithWaits((scope) => {
    declaration.render?.(scope, resource, {
      owner: controllerReference(resource, customResourceType(declaration.for)),
    });
  }, resourceAddress(resource.metadata));
}
