/**
 * One ConversionReview answered (operator/runtime/webhooks/conversion-review.ts): every object
 * converted through the kind's own conversions, or — for an object of no kind this operator
 * converts, or one whose conversion throws — the whole review failed with a message naming it.
 */
import { memcachedKind } from '../../../../constructs';
import { convertReview } from '../../../../operator/runtime/webhooks/conversion-review';

const memcached = (name: string, apiVersion = 'cache.example.com/v1alpha1') => ({
  apiVersion,
  kind: 'Memcached',
  metadata: { name, namespace: 'shop' },
  spec: { size: 2 },
});

describe('convertReview', () => {
  test('converts every object to the version asked, in order, and says Success', () => {
    const response = convertReview([memcachedKind], {
      uid: 'r-1',
      desiredAPIVersion: 'cache.example.com/v1',
      objects: [memcached('a'), memcached('b', 'cache.example.com/v1')],
    });
    expect(response.uid).toBe('r-1');
    expect(response.result).toEqual({ status: 'Success' });
    expect(response.convertedObjects.map((o) => `${o.metadata.name ?? ''} ${o.apiVersion ?? ''}`)).toEqual([
      'a cache.example.com/v1',
      'b cache.example.com/v1',
    ]);
  });

  test('an object of a kind it does not convert fails the whole review, naming it; nothing is returned', () => {
    const response = convertReview([memcachedKind], {
      uid: 'r-2',
      desiredAPIVersion: 'cache.example.com/v1',
      objects: [memcached('a'), { apiVersion: 'other.example.com/v1', kind: 'Thing', metadata: { name: 't' } }],
    });
    expect(response).toEqual({
      uid: 'r-2',
      convertedObjects: [],
      result: { status: 'Failure', message: 'Thing t: this operator converts no Thing of other.example.com/v1' },
    });
  });

  test('a conversion that throws fails the review with the object, the version asked and why', () => {
    const response = convertReview([memcachedKind], {
      uid: 'r-3',
      desiredAPIVersion: 'cache.example.com/v9',
      objects: [memcached('a')],
    });
    expect(response.result).toEqual({
      status: 'Failure',
      message: expect.stringMatching(/^Memcached shop\/a: cannot convert to cache\.example\.com\/v9: .*not served/),
    });
    expect(response.convertedObjects).toEqual([]);
  });
});
