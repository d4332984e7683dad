import type { KubeObject } from '../../../../constructs/contract';
import {
  decodeList,
  decodeStatus,
  decodeWatchEvent,
  FrameReader,
  type ObjectDecoder,
  ProtoReader,
  readTime,
} from '../../../../operator/runtime/client/protobuf';

// A few lines of protobuf encoding, enough to build the messages these tests read.
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
}
const key = (field: number, wire: number) => varint(field * 8 + wire);
const uint = (field: number, n: number) => Buffer.concat([key(field, 0), varint(n)]);
const bytes = (field: number, payload: Buffer) => Buffer.concat([key(field, 2), varint(payload.length), payload]);
const text = (field: number, s: string) => bytes(field, Buffer.from(s, 'utf8'));
const message = (field: number, ...parts: Buffer[]) => bytes(field, Buffer.concat(parts));
const envelope = (apiVersion: string, kind: string, raw: Buffer) =>
  Buffer.concat([Buffer.from('k8s\u0000', 'latin1'), message(1, text(1, apiVersion), text(2, kind)), bytes(2, raw)]);
const frame = (body: Buffer) => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([length, body]);
};

/** A decoder of a toy object: its name (field 1), everything else skipped. */
const named: ObjectDecoder = (r, end) => {
  let name = '';
  while (r.pos < end) {
    const t = r.uint();
    if (t === (1 << 3) + 2) name = r.string();
    else r.skip(t & 7);
  }
  return { apiVersion: 'v1', kind: 'Thing', metadata: { name } };
};

describe('ProtoReader', () => {
  test('varints: one byte, many bytes, and a negative int32 sent as ten', () => {
    const buf = Buffer.concat([
      varint(5),
      varint(300),
      varint(2 ** 40 + 7),
      Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
      Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f]),
    ]);
    const r = new ProtoReader(buf);
    expect([r.uint(), r.uint(), r.uint(), r.int32(), r.int32()]).toEqual([5, 300, 2 ** 40 + 7, -1, -2]);
    expect(r.pos).toBe(buf.length);
  });

  test('skips every wire type Kubernetes uses, and refuses others', () => {
    const buf = Buffer.concat([
      uint(1, 123456),
      key(2, 1),
      Buffer.alloc(8),
      text(3, 'skipped'),
      key(4, 5),
      Buffer.alloc(4),
      text(5, 'kept'),
    ]);
    const r = new ProtoReader(buf);
    let kept = '';
    while (r.pos < buf.length) {
      const t = r.uint();
      if (t >> 3 === 5) kept = r.string();
      else r.skip(t & 7);
    }
    expect(kept).toBe('kept');
    expect(() => {
      new ProtoReader(Buffer.from([0x0b])).skip(3);
    }).toThrow('wire type 3 is not used by Kubernetes');
  });

  test('a truncated message is an error, never a read past its end', () => {
    expect(() => new ProtoReader(Buffer.from([0x80])).uint()).toThrow('truncated varint');
    const field = text(1, 'hello');
    const r = new ProtoReader(field, 0, field.length - 1);
    r.uint();
    expect(() => r.string()).toThrow('runs past the end');
  });

  test('a time is RFC 3339 to the second, as JSON has it; a zero time is null', () => {
    const at = Buffer.concat([uint(1, Date.UTC(2026, 10, 28, 5, 6, 7) / 1000), uint(2, 5000)]);
    expect(readTime(new ProtoReader(at), at.length)).toBe('2026-11-28T05:06:07Z');
    expect(readTime(new ProtoReader(Buffer.alloc(0)), 0)).toBeNull();
  });
});

describe('the Kubernetes envelope', () => {
  test('a list: its items through the decoder, its resourceVersion, continue token and shardInfo', () => {
    const list = envelope(
      'v1',
      'ThingList',
      Buffer.concat([
        message(1, text(2, '42'), text(3, 'next-page'), uint(4, 3), message(5, text(1, 'shardRange(0,8000)'))),
        message(2, text(1, 'a'), text(2, 'ignored')),
        message(2, text(1, 'b')),
      ]),
    );
    const decoded = decodeList<KubeObject>(list, named);
    expect(decoded.metadata).toEqual({
      resourceVersion: '42',
      continue: 'next-page',
      shardInfo: { selector: 'shardRange(0,8000)' },
    });
    expect(decoded.items.map((i) => i.metadata.name)).toEqual(['a', 'b']);
    // The last page: no continue token.
    expect(decodeList(envelope('v1', 'ThingList', message(1, text(2, '43'), text(3, ''))), named).metadata).toEqual({
      resourceVersion: '43',
    });
  });

  test('bytes without the k8s\\0 prefix are refused', () => {
    expect(() => decodeList(Buffer.from('{"kind":"List"}'), named)).toThrow('not a Kubernetes object');
  });

  test('a watch event, and an ERROR event whose object is a Status (410 Gone)', () => {
    const added = message(2, bytes(1, envelope('v1', 'Thing', text(1, 'x'))));
    expect(decodeWatchEvent(Buffer.concat([text(1, 'ADDED'), added]), named)).toEqual({
      type: 'ADDED',
      object: { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'x' } },
    });
    const status = Buffer.concat([
      message(1),
      text(2, 'Failure'),
      text(3, 'too old resource version: 5 (90)'),
      text(4, 'Expired'),
      uint(6, 410),
    ]);
    const gone = Buffer.concat([text(1, 'ERROR'), message(2, bytes(1, envelope('v1', 'Status', status)))]);
    expect(decodeWatchEvent(gone, named)).toEqual({
      type: 'ERROR',
      object: {
        kind: 'Status',
        status: 'Failure',
        message: 'too old resource version: 5 (90)',
        reason: 'Expired',
        code: 410,
      },
    });
    expect(decodeStatus(envelope('v1', 'Status', status))).toMatchObject({ code: 410, reason: 'Expired' });
    expect(() => decodeWatchEvent(text(1, 'ADDED'), named)).toThrow('a watch event (ADDED) without an object');
    expect(() => decodeWatchEvent(Buffer.concat([text(1, 'RENAMED'), added]), named)).toThrow(
      "unknown watch event type 'RENAMED'",
    );
  });

  test('frames split anywhere are put back together; a cut frame is left buffered', () => {
    const events = ['a', 'b', 'c'].map((name) =>
      frame(Buffer.concat([text(1, 'MODIFIED'), message(2, bytes(1, envelope('v1', 'Thing', text(1, name))))])),
    );
    const stream = Buffer.concat(events);
    for (let cut = 0; cut <= stream.length; cut++) {
      const seen: string[] = [];
      const frames = new FrameReader((f) => {
        const e = decodeWatchEvent(f, named);
        seen.push(e.type === 'ERROR' ? 'error' : (e.object.metadata.name ?? ''));
      });
      frames.push(stream.subarray(0, cut));
      frames.push(stream.subarray(cut));
      expect({ cut, seen }).toEqual({ cut, seen: ['a', 'b', 'c'] });
    }
    const frames = new FrameReader(() => undefined);
    frames.push(stream.subarray(0, stream.length - 2));
    expect(frames.buffered).toBe((events[2]?.length ?? 0) - 2);
  });
});
