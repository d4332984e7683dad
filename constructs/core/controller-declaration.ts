import type { ControllerDeclaration as RuntimeDeclaration, CustomResourceObject } from '../contract';
import type { CustomResourceKind } from './kind';

/**
 * A controller declaration (see the contract's `ControllerDeclaration`) whose kind is a
 * `CustomResourceKind`: what an Operator construct synthesizes a CRD, RBAC and samples from. The
 * reconciler takes it as it is, reading the kind only as a `KindDescriptor`.
 */
export type ControllerDeclaration<
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the default admits a declaration of any kind's spec and status
  R extends CustomResourceObject = CustomResourceObject<any, any>,
  Facts extends object = object,
  Prepared extends object = object,
> = RuntimeDeclaration<R, Facts, Prepared, CustomResourceKind> & {
  /**
   * The reconciler image (a repository, without tag) whose entry point runs this controller. The
   * kit's own controllers name the kit's image, which an Operator given no `image` runs; a
   * controller of yours runs in an image you build and give the Operator as `image`.
   * @default none
   */
  readonly image?: string;
};
