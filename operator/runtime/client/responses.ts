/**
 * Reading the API server's answers: a body as JSON or protobuf, an error answer as an ApiError, a
 * stream (watch) as lines or protobuf frames as they arrive.
 */
import type * as http from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { parseJson } from '../../../constructs/contract/json';
import { retryAfterSeconds, toApiError, type ApiError } from './errors';
import { decodeStatus, FrameReader, PROTOBUF } from './protobuf';

/** The ApiError an error answer stands for, from its body (a metav1.Status, when it is JSON). */
export function readError(res: http.IncomingMessage, what: string): Promise<ApiError> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      let body: unknown;
      try {
        body = readBody(Buffer.concat(chunks), res.headers['content-type'], undefined);
      } catch {
        body = undefined;
      }
      resolve(toApiError(res.statusCode ?? 0, body, what, retryAfterSeconds(res.headers['retry-after'])));
    });
  });
}

export const isProtobuf = (contentType: string | undefined) => !!contentType?.startsWith(PROTOBUF);

/**
 * An answer's body: JSON (its text when it is not JSON), or — when the server answered in
 * protobuf — a Status for an error answer and what `protobuf` reads of anything else.
 */
export function readBody(
  body: Buffer,
  contentType: string | undefined,
  protobuf: ((body: Buffer) => unknown) | undefined,
) {
  if (isProtobuf(contentType)) return protobuf ? protobuf(body) : decodeStatus(body);
  const text = body.toString('utf8');
  try {
    return text ? parseJson(text) : undefined;
  } catch {
    return text;
  }
}

/** Feeds each frame of a protobuf watch stream to `onFrame` as it arrives (see readChunks). */
export function readFrames(res: http.IncomingMessage, onFrame: (frame: Buffer) => void): Promise<void> {
  const frames = new FrameReader(onFrame);
  return readChunks(res, (chunk) => {
    frames.push(chunk);
  });
}

/** Feeds each non-empty line of a streamed answer to `onLine` as it arrives (see readChunks). */
export function readLines(res: http.IncomingMessage, onLine: (line: string) => void): Promise<void> {
  let buffered = '';
  // A character split between chunks is put together, as res.setEncoding('utf8') would.
  const utf8 = new StringDecoder('utf8');
  return readChunks(res, (chunk) => {
    buffered += utf8.write(chunk);
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line) onLine(line);
    }
  });
}

/**
 * Feeds each chunk of a streamed answer to `onChunk` as it arrives; rejects with the first error
 * `onChunk` throws (and feeds nothing more), resolves when the answer ends.
 */
export function readChunks(res: http.IncomingMessage, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let failed = false;
    res.on('data', (chunk: Buffer) => {
      if (failed) return;
      try {
        onChunk(chunk);
      } catch (err) {
        failed = true;
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    res.on('end', () => {
      resolve();
    });
  });
}
