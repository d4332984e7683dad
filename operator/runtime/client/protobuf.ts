/**
 * Kubernetes' protobuf encoding, read without a generated schema: the wire format (varints and
 * length-delimited fields), the `k8s\0` envelope around an object, a list, the frames of a watch
 * stream, and the Status of an error. Built-in types are served this way (client-go asks for it);
 * a decoder of one type reads only the fields it keeps and skips the rest without building them,
 * where `JSON.parse` builds the whole object first. Custom resources are JSON only.
 *
 * Field numbers are those of k8s.io/apimachinery's `generated.proto` (runtime.Unknown,
 * meta/v1 ListMeta, WatchEvent, Status, Time).
 */
import type { KubeObject } from '../../../constructs/contract';
import type { KubeList, WatchErrorStatus, WatchEvent } from './client';

/** The media type of a built-in object or list in protobuf. */
export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** The media type of a watch stream in protobuf: length-prefixed WatchEvent frames. */
export const PROTOBUF_WATCH = `${PROTOBUF};stream=watch`;

/** Decodes one object's message (the bytes inside the envelope, or a list's item) into what is kept of it. */
export type ObjectDecoder = (message: ProtoReader, end: number) => KubeObject;

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

/** The tag of a field: its number and wire type, as they precede it on the wire. */
export const tag = (field: number, wire: number) => (field << 3) | wire;

/**
 * A cursor over protobuf bytes. Messages are read in place: `lengthEnd()` gives where a
 * length-delimited field ends, and its fields are read until `pos` reaches that end.
 */
export class ProtoReader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  /** An unsigned varint, exact up to 2^53 (seconds, generations, lengths). */
  uint(): number {
    const b = this.buf;
    let byte = this.byte(b);
    if (byte < 0x80) return byte;
    let value = byte & 0x7f;
    let scale = 0x80;
    do {
      byte = this.byte(b);
      value += (byte & 0x7f) * scale;
      scale *= 0x80;
    } while (byte >= 0x80);
    return value;
  }

  /** A varint as a signed 32-bit integer: a negative int32 is sent as ten bytes of two's complement. */
  int32(): number {
    const b = this.buf;
    let low = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = this.byte(b);
      if (shift < 32) low |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte >= 0x80);
    return low | 0;
  }

  bool(): boolean {
    return this.uint() !== 0;
  }

  /** Where the length-delimited field starting here ends (its length read, `pos` at its first byte). */
  lengthEnd(): number {
    const length = this.uint();
    const end = this.pos + length;
    if (end > this.end) throw new Error('protobuf: a field runs past the end of its message');
    return end;
  }

  /** A length-delimited field as UTF-8 text. */
  string(): string {
    const end = this.lengthEnd();
    const text = this.buf.toString('utf8', this.pos, end);
    this.pos = end;
    return text;
  }

  /** A length-delimited field's bytes, shared with the buffer (not copied). */
  bytes(): Buffer {
    const end = this.lengthEnd();
    const out = this.buf.subarray(this.pos, end);
    this.pos = end;
    return out;
  }

  /** Passes over a field of this wire type without reading it. */
  skip(wire: number): void {
    switch (wire) {
      case WIRE_VARINT:
        while (this.byte(this.buf) >= 0x80);
        return;
      case WIRE_FIXED64:
        this.advance(8);
        return;
      case WIRE_BYTES:
        this.pos = this.lengthEnd();
        return;
      case WIRE_FIXED32:
        this.advance(4);
        return;
      default:
        throw new Error(`protobuf: wire type ${wire} is not used by Kubernetes`);
    }
  }

  private advance(n: number): void {
    if (this.pos + n > this.end) throw new Error('protobuf: truncated message');
    this.pos += n;
  }

  private byte(b: Buffer): number {
    if (this.pos >= this.end) throw new Error('protobuf: truncated varint');
    return b[this.pos++] ?? 0;
  }
}

/** metav1.Time: seconds and nanos; as JSON an RFC 3339 time to the second, or null when zero. */
export function readTime(r: ProtoReader, end: number): string | null {
  let seconds = 0;
  let nanos = 0;
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, WIRE_VARINT)) seconds = r.uint();
    else if (t === tag(2, WIRE_VARINT)) nanos = r.int32();
    else r.skip(t & 7);
  }
  if (seconds === 0 && nanos === 0) return null;
  let text = timeTexts.get(seconds);
  if (text === undefined) {
    if (timeTexts.size >= 4096) timeTexts.clear();
    text = new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
    timeTexts.set(seconds, text);
  }
  return text;
}

/**
 * Times recently formatted, by their seconds: a Pod's times repeat in each of its events (its
 * creation, its containers' starts), and formatting one was a tenth of the decoding's CPU.
 */
const timeTexts = new Map<number, string>();

/** One entry of a `map<string, string>`: key 1, value 2. */
export function readMapEntry(r: ProtoReader, end: number): [string, string] {
  let key = '';
  let value = '';
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(1, WIRE_BYTES)) key = r.string();
    else if (t === tag(2, WIRE_BYTES)) value = r.string();
    else r.skip(t & 7);
  }
  return [key, value];
}

/** `k8s\0`, the prefix of every serialized object. */
const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;

/**
 * Where the object's own message lies inside its envelope: `k8s\0` and a runtime.Unknown. The
 * Unknown's type (apiVersion, kind) is passed over: the caller knows the type it asked for, and a
 * watch's ERROR event says so by its event type.
 */
export interface Envelope {
  readonly start: number;
  readonly end: number;
}

/** Opens the envelope of the object at `buf[start, end)`. */
export function openEnvelope(buf: Buffer, start = 0, end = buf.length): Envelope {
  if (end - start < MAGIC.length || MAGIC.some((byte, i) => buf[start + i] !== byte)) {
    throw new Error('protobuf: not a Kubernetes object (no k8s\\0 prefix)');
  }
  const r = new ProtoReader(buf, start + MAGIC.length, end);
  let rawStart = r.pos;
  let rawEnd = r.pos;
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(2, WIRE_BYTES)) {
      rawEnd = r.lengthEnd();
      rawStart = r.pos;
      r.pos = rawEnd;
    } else if (t === tag(3, WIRE_BYTES) || t === tag(4, WIRE_BYTES)) {
      // contentEncoding / contentType: set only for nested encodings the API server never sends.
      if (r.string() !== '') throw new Error('protobuf: an encoded envelope is not supported');
    } else r.skip(t & 7);
  }
  return { start: rawStart, end: rawEnd };
}

/** metav1.Status, as an error answer or a watch's ERROR event carries it. */
export function readStatus(r: ProtoReader, end: number): WatchErrorStatus & { status?: string } {
  let status: string | undefined;
  let message: string | undefined;
  let reason: string | undefined;
  let code: number | undefined;
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(2, WIRE_BYTES)) status = r.string();
    else if (t === tag(3, WIRE_BYTES)) message = r.string();
    else if (t === tag(4, WIRE_BYTES)) reason = r.string();
    else if (t === tag(6, WIRE_VARINT)) code = r.int32();
    else r.skip(t & 7);
  }
  return {
    kind: 'Status',
    ...(status ? { status } : {}),
    ...(message ? { message } : {}),
    ...(reason ? { reason } : {}),
    ...(code ? { code } : {}),
  };
}

/** A serialized Status (an error answer in protobuf), envelope included. */
export function decodeStatus(buf: Buffer): WatchErrorStatus {
  const env = openEnvelope(buf);
  return readStatus(new ProtoReader(buf, env.start, env.end), env.end);
}

/** A list answer: its ListMeta and each item through `decode`. */
export function decodeList<T extends KubeObject>(buf: Buffer, decode: ObjectDecoder): KubeList<T> {
  const env = openEnvelope(buf);
  const r = new ProtoReader(buf, env.start, env.end);
  const metadata: KubeList<T>['metadata'] = { resourceVersion: '' };
  const items: T[] = [];
  while (r.pos < env.end) {
    const t = r.uint();
    if (t === tag(1, WIRE_BYTES)) readListMeta(r, r.lengthEnd(), metadata);
    else if (t === tag(2, WIRE_BYTES)) {
      const end = r.lengthEnd();
      // The decoder is the informer type's: its items are that type.
      items.push(decode(r, end) as T);
      r.pos = end;
    } else r.skip(t & 7);
  }
  return { metadata, items };
}

function readListMeta(r: ProtoReader, end: number, into: KubeList['metadata']): void {
  while (r.pos < end) {
    const t = r.uint();
    if (t === tag(2, WIRE_BYTES)) into.resourceVersion = r.string();
    else if (t === tag(3, WIRE_BYTES)) {
      const token = r.string();
      if (token) into.continue = token;
    } else if (t === tag(5, WIRE_BYTES)) {
      const infoEnd = r.lengthEnd();
      let selector = '';
      while (r.pos < infoEnd) {
        const tt = r.uint();
        if (tt === tag(1, WIRE_BYTES)) selector = r.string();
        else r.skip(tt & 7);
      }
      into.shardInfo = { selector };
    } else r.skip(t & 7);
  }
}

/** One frame of a watch stream: a WatchEvent whose object is an enveloped object (a Status for ERROR). */
export function decodeWatchEvent(frame: Buffer, decode: ObjectDecoder): WatchEvent {
  const r = new ProtoReader(frame);
  let type = '';
  let object: [number, number] | undefined;
  while (r.pos < frame.length) {
    const t = r.uint();
    if (t === tag(1, WIRE_BYTES)) type = r.string();
    else if (t === tag(2, WIRE_BYTES)) {
      // A RawExtension: its raw bytes (field 1) are the enveloped object.
      const extEnd = r.lengthEnd();
      while (r.pos < extEnd) {
        const tt = r.uint();
        if (tt === tag(1, WIRE_BYTES)) {
          const rawEnd = r.lengthEnd();
          object = [r.pos, rawEnd];
          r.pos = rawEnd;
        } else r.skip(tt & 7);
      }
    } else r.skip(t & 7);
  }
  if (!object) throw new Error(`protobuf: a watch event (${type || 'no type'}) without an object`);
  const env = openEnvelope(frame, object[0], object[1]);
  const body = new ProtoReader(frame, env.start, env.end);
  if (type === 'ERROR') return { type, object: readStatus(body, env.end) };
  if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED' && type !== 'BOOKMARK') {
    throw new Error(`protobuf: unknown watch event type '${type}'`);
  }
  return { type, object: decode(body, env.end) };
}

/**
 * Splits a watch stream into its frames (each a 4-byte big-endian length and that many bytes)
 * as chunks arrive, whatever their boundaries; hands each whole frame to `onFrame`.
 */
export class FrameReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly onFrame: (frame: Buffer) => void) {}

  push(chunk: Buffer): void {
    let buf = chunk;
    if (this.pending.length) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      // Wait for the rest of a frame before copying the pieces into one.
      if (this.pendingBytes < 4 || this.pendingBytes < 4 + Buffer.concat(this.pending, 4).readUInt32BE(0)) return;
      buf = Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
    }
    let off = 0;
    while (buf.length - off >= 4) {
      const length = buf.readUInt32BE(off);
      if (buf.length - off - 4 < length) break;
      this.onFrame(buf.subarray(off + 4, off + 4 + length));
      off += 4 + length;
    }
    if (off < buf.length) {
      this.pending = [buf.subarray(off)];
      this.pendingBytes = buf.length - off;
    }
  }

  /** Bytes of a frame begun and not finished (a stream that ends here was cut). */
  get buffered(): number {
    return this.pendingBytes;
  }
}
