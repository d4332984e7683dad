/** Image references, as the OCI distribution grammar has them, and the reconciler image an Operator runs. */
import { DEFAULT_IMAGE, DEFAULT_IMAGE_TAG } from './kit-image';
import type { OperatorProps } from './operator-props';

const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const DOMAIN =
  '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?';
/** `[registry[:port]/]path[:tag][@digest]`, as the OCI distribution reference grammar has it. */
const IMAGE_REFERENCE = new RegExp(
  `^(?:(${DOMAIN})/)?(${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?(?:@(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128}))?$`,
);

/** A parsed image reference. */
export interface ImageReference {
  readonly registry?: string;
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

/** Parses an image reference; throws with the reason when it is not one. */
export function parseImageReference(image: string): ImageReference {
  const m = IMAGE_REFERENCE.exec(image);
  // A first component without a dot, colon or "localhost" is a path, not a registry (docker's rule).
  if (!m) {
    throw new Error(
      `${JSON.stringify(image)} is not an image reference; use [registry/]repository[:tag][@sha256:digest] with a lower-case repository, e.g. "ghcr.io/acme/operator:1.2.0"`,
    );
  }
  const [, registry, path = '', tag, digest] = m;
  if (registry && !/[.:]/.test(registry) && registry !== 'localhost') {
    const repository = `${registry}/${path}`;
    if (/[A-Z]/.test(repository)) throw new Error(`${JSON.stringify(image)}: the repository must be lower-case`);
    return { repository, tag, digest };
  }
  return { registry, repository: path, tag, digest };
}

/** The reconciler image of an operator: `image` (which may carry a tag or digest) and `imageTag`. */
export function imageReference(props: OperatorProps): string {
  const image = props.image ?? DEFAULT_IMAGE;
  const ref = parseImageReference(image);
  const where = `Operator ${JSON.stringify(props.name ?? '')}`.replace(' ""', '');
  if ((ref.tag || ref.digest) && props.imageTag) {
    throw new Error(
      `${where}: image ${JSON.stringify(image)} already names a ${ref.digest ? 'digest' : 'tag'}; drop imageTag (${JSON.stringify(props.imageTag)}) or the one in image`,
    );
  }
  if (ref.tag || ref.digest) return image;
  const tag = props.imageTag ?? DEFAULT_IMAGE_TAG;
  if (!/^[\w][\w.-]{0,127}$/.test(tag))
    throw new Error(
      `${where}: imageTag ${JSON.stringify(tag)} is not a tag; use letters, digits, ".", "_" and "-", e.g. "1.2.0"`,
    );
  return `${image}:${tag}`;
}
