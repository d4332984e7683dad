/**
 * ConversionReviews (apiextensions.k8s.io/v1) for the kinds whose versions have schemas of their
 * own: the API server posts the objects and the version it wants, and gets them back converted
 * through the storage version by the kind's own conversions (constructs/core/conversion.ts).
 */
import type { KubeObject } from '../../../constructs/contract';
import type { KindDescriptor } from '../../../constructs/contract/kind';

export interface ConversionRequest {
  readonly uid: string;
  readonly desiredAPIVersion: string;
  readonly objects: readonly KubeObject[];
}

export interface ConversionResponse {
  readonly uid: string;
  readonly convertedObjects: readonly KubeObject[];
  readonly result: { readonly status: 'Success' } | { readonly status: 'Failure'; readonly message: string };
}

/**
 * The answer to one review. A conversion that throws fails the whole review with a message
 * naming the object; the API server then fails the request that needed it (nothing is written).
 */
export function convertReview(kinds: readonly KindDescriptor[], request: ConversionRequest): ConversionResponse {
  const { uid, desiredAPIVersion } = request;
  const converted: KubeObject[] = [];
  for (const object of request.objects) {
    const group = String(object.apiVersion).split('/')[0];
    const kind = kinds.find((k) => k.group === group && k.kind === object.kind);
    const name = `${object.kind ?? '?'} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name ?? '?'}`;
    if (!kind)
      return failure(uid, `${name}: this operator converts no ${object.kind ?? '?'} of ${object.apiVersion ?? '?'}`);
    try {
      converted.push(kind.convert(object, desiredAPIVersion));
    } catch (err) {
      return failure(
        uid,
        `${name}: cannot convert to ${desiredAPIVersion}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  return { uid, convertedObjects: converted, result: { status: 'Success' } };
}

function failure(uid: string, message: string): ConversionResponse {
  return { uid, convertedObjects: [], result: { status: 'Failure', message } };
}
