/**
 * A resource's children: rendered from its declaration (renders reused while their input is unchanged),
 * applied only when they would change, the ones written but not yet seen by the cache, and the Warning
 * Events Kubernetes' own controllers record about them.
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { applyIfChanged, controllerReference, notOwnedReason } from './apply';
export { ChildFailures } from './child-failures';
export { controlledBy, getMadeFor, getOwn, type KeptBy, keptType } from './kept-objects';
export { ownerByReferences, ownerOfClaim, ownerOfPod } from './owner-of-child';
export {
  externalFactsUnknown,
  NOTHING_RENDERED,
  renderChildren,
  renderChildrenWithWaits,
  renderDeclaration,
} from './render';
export { type ReadStatus, RenderCache } from './render-cache';
export { WrittenChildren } from './written-children';
export { refusalHint, type RefusedChild, withRefusalHint } from './refusal-hints';
