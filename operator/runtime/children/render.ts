import type { KubeObject } from '../../../constructs/contract';
import {
  ChildMap,
  type Children,
  type ControllerDeclaration,
  type CustomResourceObject,
  customResourceType,
} from '../../../constructs/contract';
import { type RenderedChildren, renderWithWaits, resourceAddress } from '../../../constructs/contract/render';
import { controllerReference } from './apply';
import type { ReadStatus } from './render-cache';

/** The children a declaration renders for a resource, with the owner reference the runtime gives. */
export function renderChildren(declaration: ControllerDeclaration, resource: CustomResourceObject): KubeObject[] {
  return renderChildrenWithWaits(declaration, resource).objects;
}

/**
 * `renderChildren`, with the waits between the children (see `waitsFor`): as the reconciler
 * renders it, with the external facts the declaration reads from `children` (see
 * `observeExternal`; none given, as for a resource not made yet).
 */
export function renderChildrenWithWaits(
  declaration: ControllerDeclaration,
  resource: CustomResourceObject,
  children: Children = new ChildMap(),
): RenderedChildren {
  if (!declaration.render) return NOTHING_RENDERED;
  return renderDeclaration(declaration, resource, declaration.observeExternal?.(resource, children));
}

/** What a declaration without `render` makes: nothing, and nothing waits. */
export const NOTHING_RENDERED: RenderedChildren = Object.freeze({ objects: [], waits: new Map() });

/**
 * The one render of a declaration's children for a resource, given the external facts: what the
 * reconciler applies (through its render cache) and what `render`, `diff` and `plan` show. Each
 * child carries the owner reference the runtime gives it.
 */
export function renderDeclaration(
  declaration: ControllerDeclaration,
  resource: CustomResourceObject,
  external: object | undefined,
  readStatus: ReadStatus = () => undefined,
): RenderedChildren {
  if (!declaration.render) return NOTHING_RENDERED;
  const fields = declaration.renderReadsStatus;
  const seen = fields ? withStatusFields(resource, fields, readStatus) : watchingStatus(resource, readStatus);
  return renderWithWaits((scope) => {
    declaration.render?.(scope, seen, {
      owner: controllerReference(resource, customResourceType(declaration.for)),
      external,
    });
  }, resourceAddress(resource.metadata));
}

/** Why an offline render may differ from the reconciler's: an external step whose facts it cannot read. */
export function externalFactsUnknown(declaration: ControllerDeclaration): string | undefined {
  return declaration.external && !declaration.observeExternal
    ? `controller ${declaration.name} has an external step whose facts cannot be read offline: rendered without them`
    : undefined;
}

/**
 * The resource with a status of `fields` alone (see `renderReadsStatus`), each read telling
 * `readField`: a getter per field, so a spread, JSON or clone of it reads (and counts) them all.
 */
function withStatusFields<T extends CustomResourceObject>(
  resource: T,
  fields: readonly string[],
  readField: (field: string) => void,
): T {
  const status = (resource.status ?? {}) as Record<string, unknown>;
  const view: Record<string, unknown> = {};
  for (const field of fields)
    Object.defineProperty(view, field, {
      get: () => {
        readField(field);
        return status[field];
      },
      enumerable: true,
    });
  return { ...resource, status: view };
}

/**
 * The resource as a render that names no status fields sees it, telling `readStatus` when its
 * status is read — directly, by a spread, JSON or a clone, all of which read the property — so
 * that a render that never reads it is reused across our own status writes (see RenderCache). A
 * copy: the cached object stays as it is.
 */
function watchingStatus<T extends CustomResourceObject>(resource: T, readStatus: ReadStatus): T {
  const seen = { ...resource };
  Object.defineProperty(seen, 'status', {
    get: () => {
      // All of it: the render may read any field (see `renderReadsStatus` for fewer).
      readStatus();
      return resource.status;
    },
    // Listed even where the resource has none yet, so that a spread or JSON of it counts as a
    // read (a status that then appears must render again); its value is then undefined, which
    // JSON leaves out as before.
    enumerable: true,
    configurable: true,
  });
  return seen;
}
