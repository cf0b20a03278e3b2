// The database handle every data module takes: a PrismaClient made by lib/db/prisma.ts (a transaction client
// has the same shape). Its own module, so lib/db's modules can name it without importing the connection.
import type { PrismaClient } from "@/lib/generated/prisma/client";

export type Db = PrismaClient;
