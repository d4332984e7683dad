/** The reconciler image the package's `image` command builds of the kit's entry point (`npm run image`). */
export const DEFAULT_IMAGE = 'cdk8s-operator-kit/reconciler';
/** The tag of that image matching this version of the kit. */
export const DEFAULT_IMAGE_TAG = '0.1.0';
