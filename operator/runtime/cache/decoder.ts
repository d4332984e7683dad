import type { Logger } from 'pino';
import { isOfType, type KubeObject, type ResourceType } from '../../../constructs/contract';
import { apiVersionOf, type ObjectDecoder } from '../client';
import type { StringPool } from './string-pool';

/**
 * What the informer caches of each object the server sends: typed (with its apiVersion and kind,
 * which a list's items lack) and transformed. Objects its protobuf decoder built are already what
 * the transform keeps, so they are not transformed twice.
 */
export class InformerDecoder<T extends KubeObject> {
  /** For the client's protobuf lists and watches, when the informer reads protobuf. */
  readonly protobuf?: ObjectDecoder;
  /** Objects the protobuf decoder made. */
  private readonly decoded = new WeakSet<KubeObject>();

  constructor(
    private readonly type: ResourceType<T>,
    private readonly options: {
      readonly transform?: (obj: KubeObject) => KubeObject;
      readonly protobuf?: ObjectDecoder;
      /** Where the strings of what is cached are kept once (see StringPool). @default none */
      readonly strings?: StringPool;
      readonly logger: Logger;
    },
  ) {
    const { protobuf } = options;
    if (protobuf) {
      this.protobuf = (r, end) => {
        const obj = protobuf(r, end);
        this.decoded.add(obj);
        return obj;
      };
    }
  }

  /** The object as cached, or undefined (logged) when it is not of the type: a transform that changed its kind. */
  typed(obj: KubeObject): T | undefined {
    const typed =
      obj.apiVersion && obj.kind ? obj : { ...obj, apiVersion: apiVersionOf(this.type), kind: this.type.kind };
    const kept = this.options.transform && !this.decoded.has(obj) ? this.options.transform(typed) : typed;
    // Always true of what the API server sends for this type, and of a transform that keeps the
    // kind; the check is what makes the cache's objects `T`.
    if (isOfType(this.type, kept)) {
      this.options.strings?.internIn(kept);
      return kept;
    }
    this.options.logger.error(
      { resource: this.type.resource, apiVersion: kept.apiVersion, kind: kept.kind },
      'not cached: the object is not of the informer type (a cache transform changed its kind?)',
    );
    return undefined;
  }
}
