// Vectors read in bulk travel packed (lib/db/packed-vectors.ts): what comes out must be, number for number, what the
// row holds, on both engines, whatever the array holds.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { packedVector, unpackVector } from "@/lib/db/packed-vectors";
import { Prisma } from "@/lib/generated/prisma/client";

describe.each(engines)("packed vectors on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  const roundTrip = async (literal: string, type = "real[]") => {
    const [row] = await t.db.$queryRaw<Array<{ packed: string | null; plain: number[] | null }>>`
      SELECT ${packedVector("v")} AS packed, v::float8[] AS plain FROM (SELECT ${Prisma.raw(`${literal}::${type}`)} AS v) x`;
    return { got: row.packed === null ? null : Array.from(unpackVector(row.packed)), want: row.plain };
  };

  it("a stored vector comes back exactly, as a real number each", async () => {
    const values = [0.1, -0.25, 1e-38, 3.4e38, -7.123456789, 0, 42];
    const { got, want } = await roundTrip(`ARRAY[${values.join(",")}]`);
    expect(got).toEqual(want!.map((x) => Math.fround(x)));
    expect(got).toHaveLength(values.length);
  });

  it("512 numbers, a double precision array, an empty one, a NULL element and a NULL vector", async () => {
    const long = await roundTrip(`(SELECT array_agg(g / 7.0) FROM generate_series(1, 512) g)`);
    expect(long.got).toEqual(long.want!.map((x) => Math.fround(x)));
    const doubles = await roundTrip("ARRAY[0.1, -2.5]", "float8[]");
    expect(doubles.got).toEqual([Math.fround(0.1), -2.5]);
    expect((await roundTrip("'{}'")).got).toEqual([]);
    expect((await roundTrip("ARRAY[1, NULL, 3]")).got).toEqual([1, 0, 3]);
    expect((await roundTrip("NULL")).got).toBeNull();
  });

  it("an array of another type is refused, not read as numbers", async () => {
    const [row] = await t.db.$queryRaw<
      Array<{ packed: string }>
    >`SELECT ${packedVector("ARRAY[1, 2]::int[]")} AS packed`;
    expect(() => unpackVector(row.packed)).toThrow(/not an array of floats/);
  });
});
