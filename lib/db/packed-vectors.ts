// Vectors read in bulk (an instance keeping a user's vectors, lib/memory/kept-vectors.ts and vectors.ts) travel as
// PostgreSQL's binary array format, base64 text, not as `real[]` text: the database formats no decimals and the app
// parses none. 2,000 vectors of 512: 62–73 ms against 362–465 ms on PostgreSQL, 95–191 against 318–630 on PGlite
// (docs/benchmarks.md). Base64, because Prisma's raw queries take text as it comes but not every adapter's bytes.
import { Prisma } from "@/lib/generated/prisma/client";

/** A `real[]` column (a trusted name, never input) as its packed text; NULL stays NULL. */
export const packedVector = (column: string): Prisma.Sql => Prisma.raw(`encode(array_send(${column}), 'base64')`);

const FLOAT4 = 700;
const FLOAT8 = 701;

/**
 * The numbers of a packed array (array_send's layout: dimensions, a null flag, the element type, each dimension's
 * size and lower bound, then each element's length and bytes, big-endian). A NULL element reads as 0.
 */
export function unpackVector(packed: string): Float32Array {
  const b = Buffer.from(packed, "base64");
  if (b.length < 12) throw new Error("not a packed array");
  // A DataView reads big-endian numbers about twice as fast as Buffer's readers (10,000 vectors of 512: 82–109 ms
  // against 136–245 ms, of which decoding the base64 is 46).
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const ndim = view.getInt32(0);
  const type = view.getInt32(8);
  if (ndim === 0) return new Float32Array(0);
  if (type !== FLOAT4 && type !== FLOAT8) throw new Error(`not an array of floats (type ${type})`);
  let n = 1;
  for (let d = 0; d < ndim; d++) n *= view.getInt32(12 + d * 8);
  const out = new Float32Array(n);
  let o = 12 + ndim * 8;
  for (let i = 0; i < n; i++) {
    const len = view.getInt32(o);
    o += 4;
    if (len < 0) continue;
    out[i] = type === FLOAT4 ? view.getFloat32(o) : view.getFloat64(o);
    o += len;
  }
  return out;
}
